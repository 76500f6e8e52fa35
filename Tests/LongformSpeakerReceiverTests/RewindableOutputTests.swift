import LongformSpeakerReceiver
import LongformSpeakerProtocol
import Testing

/// A speaker whose output holds seconds it can still take back (a PulseAudio server): a change
/// is heard from the first frame the output can change, not after all it holds. The session is
/// played out without sockets, as in `SpeakerSessionTests`, its output placed frame by frame.
@Suite struct RewindableOutputTests {
    /// Renders output frames `frames` in blocks of `block`, output frame 0 heard at network time
    /// `start`, for an output that can change frames from `changeable` on; the left channel.
    static func render(_ session: inout SpeakerSession, _ frames: Range<Int>, start: UInt64, changeable: Int64, block: Int = 4_410) -> [Float] {
        var heard: [Float] = []
        var frame = frames.lowerBound
        while frame < frames.upperBound {
            let count = min(block, frames.upperBound - frame)
            let output = session.render(frameCount: count, outputChannels: 2, heardAt: SpeakerSessionTests.local(start, plusFrames: frame),
                                        placement: OutputPlacement(frame: Int64(frame), firstChangeableFrame: changeable))
            heard += stride(from: 0, to: output.count, by: 2).map { output[$0] }
            frame += count
        }
        return heard
    }

    /// A session playing the ramp from media frame 0 at network time `start`, whose output has
    /// rendered output frames 0..<`frames` (the first changeable then); and their left channel.
    static func playing(from start: UInt64, rendered frames: Int, configuration: SpeakerSession.Configuration = .init(name: "test"))
        -> (session: SpeakerSession, heard: [Float]) {
        var session = SpeakerSessionTests.ready(configuration)
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start)))
        let heard = render(&session, 0..<frames, start: start, changeable: 0)
        return (session, heard)
    }

    /// The first index at which `heard` and `expected` differ (or their lengths do), nil when they
    /// are the same: a failure names where, rather than printing a million samples.
    static func firstDifference(_ heard: some Collection<Float>, _ expected: [Float]) -> Int? {
        let heard = Array(heard)
        if let index = zip(heard, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset { return index }
        return heard.count == expected.count ? nil : min(heard.count, expected.count)
    }

    /// The ramp's left samples for media frames `frames`.
    static func ramp(_ frames: Range<Int>) -> [Float] { frames.map { SpeakerSessionTests.left(Int64($0)) } }

    @Test func aPauseIsHeardFromItsMomentThoughTheOutputHoldsSecondsPastIt() {
        let start: UInt64 = 80_000_000_000
        var (session, heard) = Self.playing(from: start, rendered: 88_200)
        // 2 s are in the output; it can still change them from frame 882 on.
        session.changeableOutputFrame = 882
        guard case .status(let status) = session.status() else { Issue.record("no status"); return }
        #expect(status.nextFrame == 882, "the sender learns where a change can reach, not how far the output holds")
        _ = session.receive(.anchor(RateAnchor(rate: 0, mediaFrame: 4_410, networkTime: start + 100_000_000)))
        #expect(session.takeRewindRequest() == 4_410, "rendered again from the pause's moment")
        heard = Array(heard.prefix(4_410)) + Self.render(&session, 4_410..<88_200, start: start, changeable: 882)
        #expect(Self.firstDifference(Array(heard.prefix(4_410)), Self.ramp(0..<4_410)) == nil)
        #expect(heard.dropFirst(4_410).allSatisfy { $0 == 0 }, "silent from the pause's moment")
        #expect(session.nextFrame == 4_410 && session.takeRewindRequest() == nil)
    }

    @Test func whatTheOutputHeldBeforeItPlayedIsRenderedAgainOnceItPlays() {
        // Before its clock runs, the output's frames are placed at times long past: an anchor
        // finds none of them to take back. Once it plays, it renders again from where it can.
        let start: UInt64 = 82_000_000_000
        var session = SpeakerSessionTests.ready()
        session.isOutputRunning = false
        _ = Self.render(&session, 0..<88_200, start: 30_000_000_000, changeable: 0)
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start)))
        #expect(session.takeRewindRequest() == nil, "no frame rendered is heard at the anchor's moment")
        session.changeableOutputFrame = 441
        session.isOutputRunning = true
        #expect(session.takeRewindRequest() == 441)
        session.isOutputRunning = true
        #expect(session.takeRewindRequest() == nil, "once, when it starts playing")
        // Rendered again on the running clock (output frame 0 heard at `start`): the ramp from the anchor's frame.
        let heard = Self.render(&session, 441..<4_410, start: start, changeable: 441)
        #expect(Self.firstDifference(heard, Self.ramp(441..<4_410)) == nil)
    }

    @Test func beforeAStartTheFirstChangeableFrameIsTheStartsNotTheEndOfWhatTheOutputHolds() {
        // The output renders 2 s ahead: a second of silence before the anchor's moment (nothing
        // read), then a second of the ramp. A sender skips audio before the frame a status
        // reports, so the status must say the start's frame, not the end of what is held.
        let start: UInt64 = 85_000_000_000
        var session = SpeakerSessionTests.ready()
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start + 1_000_000_000)))
        let heard = Self.render(&session, 0..<88_200, start: start, changeable: 0)
        #expect(heard.prefix(44_100).allSatisfy { $0 == 0 } && Self.firstDifference(heard.dropFirst(44_100), Self.ramp(0..<44_100)) == nil)
        session.changeableOutputFrame = 2_205
        guard case .status(let status) = session.status() else { Issue.record("no status"); return }
        #expect(status.nextFrame == 0, "the start's frame, not \(status.nextFrame)")
        session.changeableOutputFrame = 50_000
        guard case .status(let later) = session.status() else { Issue.record("no status"); return }
        #expect(later.nextFrame == 50_000 - 44_100, "once playing, the frame at the first changeable one")
    }

    @Test func aFlushIsJudgedByWhatTheOutputCanChangeAndHeardWhenItsAudioComes() {
        let start: UInt64 = 90_000_000_000
        var (session, heard) = Self.playing(from: start, rendered: 88_200)
        session.changeableOutputFrame = 441
        // A flush must leave 50 ms (2,205 frames) after the first frame the output can change;
        // refused, it is done from the frame it names, and what the output holds from there is
        // rendered again when the sender's audio (here the same) comes again.
        #expect(session.receive(.flush(requestID: 1, fromFrame: 2_000)) == [.send(.flushResult(requestID: 1, isAccepted: false, firstUnplayedFrame: 2_646))])
        #expect(session.buffer?.endFrame == 2_646 && session.takeRewindRequest() == nil)
        _ = session.receive(TestSender.ramp(2_646, 1_764))
        #expect(session.takeRewindRequest() == 2_646)
        #expect(session.receive(.flush(requestID: 2, fromFrame: 4_410)) == [.send(.flushResult(requestID: 2, isAccepted: true, firstUnplayedFrame: 2_646))])
        #expect(session.takeRewindRequest() == nil, "what the output holds stays until the resent audio comes")
        // The resent audio: a second of one value.
        let value: [UInt8] = [0x34, 0x12, 0, 0]
        _ = session.receive(.audio(firstFrame: 4_410, frameCount: 44_100, samples: Array((0..<44_100).map { _ in value }.joined())))
        #expect(session.takeRewindRequest() == 4_410)
        heard = Array(heard.prefix(4_410)) + Self.render(&session, 4_410..<88_200, start: start, changeable: 441)
        #expect(Self.firstDifference(Array(heard.prefix(4_410)), Self.ramp(0..<4_410)) == nil)
        #expect(heard[4_410..<48_510].allSatisfy { $0 == Float(0x1234) / 32_768 }, "the new audio from the flush's frame")
        #expect(heard[48_510...].allSatisfy { $0 == 0 }, "silence where the buffer has nothing yet")
        // Audio that comes for what was rendered as silence is rendered again from there.
        _ = session.receive(TestSender.ramp(48_510, 44_100))
        #expect(session.takeRewindRequest() == 48_510)
        #expect(Self.firstDifference(Self.render(&session, 48_510..<60_000, start: start, changeable: 30_000), Self.ramp(48_510..<60_000)) == nil)
    }

    @Test func aVolumeIsHeardFromTheFirstFrameTheOutputCanChangeWithNothingLostOrRepeated() {
        let start: UInt64 = 100_000_000_000
        // No jump to where the anchor says, however far off: only the restored state puts the output right.
        var (session, heard) = Self.playing(from: start, rendered: 44_100, configuration: .init(name: "test", resyncThreshold: 10))
        session.changeableOutputFrame = 2_205
        _ = session.receive(.volume(speaker: 0.5, group: 1))
        #expect(session.takeRewindRequest() == 2_205)
        // The route renders again a little later than asked (its thread was late): from there on.
        heard = Array(heard.prefix(3_000)) + Self.render(&session, 3_000..<44_100, start: start, changeable: 2_205)
        #expect(Self.firstDifference(Array(heard.prefix(3_000)), Self.ramp(0..<3_000)) == nil)
        #expect(Self.firstDifference(Array(heard[3_000...]), Self.ramp(3_000..<44_100).map { $0 * 0.5 }) == nil, "at half volume, nothing lost or repeated")
    }

    @Test func whilePlayingTheOutputRendersNoFurtherThanTheAudioHeldAndWhilePausedAsFarAsItLikes() {
        var session = SpeakerSessionTests.ready()
        #expect(session.playableFrameCount == nil, "no anchor: silence, which an anchor takes back")
        let start: UInt64 = 120_000_000_000
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start)))
        #expect(session.playableFrameCount == 441_000, "about to play: the 10 s held")
        _ = Self.render(&session, 0..<44_100, start: start, changeable: 0)
        #expect(session.playableFrameCount == 396_900, "playing: what is held past the frames rendered")
        _ = session.receive(.anchor(RateAnchor(rate: 0, mediaFrame: 44_100, networkTime: start + 1_000_000_000)))
        _ = Self.render(&session, 44_100..<48_510, start: start, changeable: 0)
        #expect(session.playableFrameCount == nil, "paused")
    }

    @Test func aPlayAfterAPauseTheOutputHeldIsHeardFromItsOwnMomentEvenWhenTheOutputRendersFromEarlier() {
        let start: UInt64 = 130_000_000_000
        var (session, heard) = Self.playing(from: start, rendered: 88_200, configuration: .init(name: "test", resyncThreshold: 10))
        session.changeableOutputFrame = 441
        _ = session.receive(.anchor(RateAnchor(rate: 0, mediaFrame: 4_410, networkTime: start + 100_000_000)))
        #expect(session.takeRewindRequest() == 4_410)
        heard = Array(heard.prefix(4_410)) + Self.render(&session, 4_410..<88_200, start: start, changeable: 441)
        // Resumed from the frame it paused at, 1.05 s after the start: output frame 46,305.
        session.changeableOutputFrame = 2_000
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 4_410, networkTime: start + 1_050_000_000)))
        #expect(session.takeRewindRequest() == 46_305)
        // The route renders again from a little earlier, in one block: silence up to the moment, then the ramp.
        heard = Array(heard.prefix(45_000)) + Self.render(&session, 45_000..<88_200, start: start, changeable: 2_000, block: 43_200)
        #expect(Self.firstDifference(Array(heard.prefix(4_410)), Self.ramp(0..<4_410)) == nil)
        #expect(heard[4_410..<46_305].allSatisfy { $0 == 0 }, "paused until the play's moment")
        #expect(Self.firstDifference(heard[46_305...], Self.ramp(4_410..<(4_410 + 88_200 - 46_305))) == nil, "from the paused frame, exactly at the moment")
    }

    @Test func aPauseWithinABlockIsHeardFromItsOwnFrame() {
        var session = SpeakerSessionTests.ready()
        let start: UInt64 = 140_000_000_000
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start)))
        var heard = Self.render(&session, 0..<44_100, start: start, changeable: 0, block: 44_100)
        _ = session.receive(.anchor(RateAnchor(rate: 0, mediaFrame: 48_510, networkTime: start + 1_100_000_000)))
        heard += Self.render(&session, 44_100..<88_200, start: start, changeable: 0, block: 44_100)
        #expect(Self.firstDifference(Array(heard.prefix(48_510)), Self.ramp(0..<48_510)) == nil)
        #expect(heard.dropFirst(48_510).allSatisfy { $0 == 0 }, "silent from the pause's frame, inside the block")
    }

    @Test func aNewSenderIsNotHeardAfterWhatTheOutputHoldsOfTheLastOne() {
        let start: UInt64 = 110_000_000_000
        var session = Self.playing(from: start, rendered: 44_100).session
        session.changeableOutputFrame = 1_000
        _ = session.receive(.hello(sessionID: Array(repeating: 9, count: 16), senderName: "another", timingPort: 7001))
        #expect(session.takeRewindRequest() == 1_000)
        #expect(Self.render(&session, 1_000..<44_100, start: start, changeable: 1_000).allSatisfy { $0 == 0 })
    }
}
