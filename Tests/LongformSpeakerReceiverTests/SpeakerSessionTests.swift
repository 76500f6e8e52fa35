import Foundation
import LongformSpeakerReceiver
import LongformSpeakerProtocol
import Testing

/// The speaker's rules, played out without sockets: a clock the tests set, audio whose every
/// sample names its frame, and renders at chosen times.
@Suite struct SpeakerSessionTests {
    static let rate = 44_100
    /// Sender clock − speaker clock, in ns.
    static let offset: Int64 = 3_000_000_000

    /// The left sample of `frame` of `TestSender.ramp` as the speaker plays it.
    static func left(_ frame: Int64) -> Float { Float(Int16(frame % 16_384)) / 32_768 }

    /// A session that said hello, has the format, 10 s of audio and a perfect clock.
    static func ready(_ configuration: SpeakerSession.Configuration = .init(name: "test")) -> SpeakerSession {
        var session = SpeakerSession(configuration: configuration)
        _ = session.receive(.hello(sessionID: Array(repeating: 1, count: 16), senderName: "sender", timingPort: 7000))
        _ = session.receive(.format(AudioStreamFormat(sampleRate: UInt32(rate), channelCount: 2, encoding: .signed16)))
        _ = session.receive(TestSender.ramp(0, rate * 10))
        // One exchange on a quiet symmetric network: the estimate is exact.
        let t1: UInt64 = 1_000_000
        let t2 = UInt64(Int64(t1 + 50_000) + offset)
        session.receiveClockReply(ClockExchange.Reply(sequence: 0, t1: t1, t2: t2, t3: t2 + 10_000), at: t1 + 110_000)
        return session
    }

    /// Local (speaker) time of network time `network`.
    static func local(_ network: UInt64) -> UInt64 { UInt64(Int64(network) - offset) }
    /// Local time of the `n`th frame after network time `start`.
    static func local(_ start: UInt64, plusFrames n: Int) -> UInt64 { local(start) + UInt64(n) * 1_000_000_000 / UInt64(rate) }

    @Test func theAnchoredFrameIsHeardExactlyAtItsTimeAndTheRestFollowsWithoutASeam() {
        var session = Self.ready()
        let start: UInt64 = 10_000_000_000
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 1_000, networkTime: start)))
        // A render that begins 100 frames before the anchor's moment (times on the frame grid).
        var output = session.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start) - 100 * 1_000_000_000 / UInt64(Self.rate))
        let firstSound = output.firstIndex { $0 != 0 }.map { $0 / 2 }
        #expect(firstSound == 100 || firstSound == 101, "frame 1000 (value 1000) at the anchor's moment: \(String(describing: firstSound))")
        var heard: [Float] = stride(from: 0, to: output.count, by: 2).map { output[$0] }
        // Then block after block, each asked for at the time its first frame is heard.
        for block in 1..<20 {
            output = session.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start, plusFrames: block * 441 - 100))
            heard += stride(from: 0, to: output.count, by: 2).map { output[$0] }
        }
        let begin = heard.firstIndex { $0 != 0 }!
        let expected = (0..<(heard.count - begin)).map { Self.left(1_000 + Int64($0)) }
        #expect(Array(heard[begin...]) == expected, "no frame lost or repeated")
        #expect(session.nextFrame == 1_000 + Int64(heard.count - begin))
    }

    /// An anchor that reaches the output after its moment (a resume on a loaded host): the output
    /// starts where the timeline is, and says how many frames it held from the anchor's were not
    /// played; once, not again as it plays on. One in time says nothing.
    @Test func anAnchorReachingTheOutputLateStartsInStepAndSaysWhatWasNotPlayed() {
        var session = Self.ready()
        let start: UInt64 = 10_000_000_000
        let anchor = RateAnchor(rate: 1, mediaFrame: 1_000, networkTime: start)
        _ = session.receive(.anchor(anchor))
        // The first render 882 frames (20 ms) after the anchor's moment.
        let output = session.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start, plusFrames: 882))
        #expect(output[0] == Self.left(1_882), "in step: frame 1,882 first")
        #expect(session.lateStart.map { $0.anchor == anchor && $0.skippedFrames == 882 } == true, "\(String(describing: session.lateStart))")
        _ = session.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start, plusFrames: 882 + 441))
        #expect(session.lateStart?.skippedFrames == 882)

        var onTime = Self.ready()
        _ = onTime.receive(.anchor(anchor))
        _ = onTime.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start) - 100 * 1_000_000_000 / UInt64(Self.rate))
        _ = onTime.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start, plusFrames: 341))
        #expect(onTime.lateStart == nil)
    }

    @Test func pauseHoldsAndResumeGoesOnFromTheSameFrame() {
        var session = Self.ready()
        let start: UInt64 = 20_000_000_000
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start)))
        var heard: [Float] = []
        for block in 0..<10 {
            let output = session.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start, plusFrames: block * 441))
            heard += stride(from: 0, to: output.count, by: 2).map { output[$0] }
        }
        let pausedAt = session.nextFrame!
        _ = session.receive(.anchor(RateAnchor(rate: 0, mediaFrame: pausedAt, networkTime: start + 100_000_000)))
        let paused = session.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start, plusFrames: 10 * 441))
        #expect(paused.allSatisfy { $0 == 0 })
        // Resumed 2 s later on the network clock, from the frame it paused at.
        let resume = start + 3_000_000_000
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: pausedAt, networkTime: resume)))
        for block in 0..<10 {
            let output = session.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(resume, plusFrames: block * 441))
            heard += stride(from: 0, to: output.count, by: 2).map { output[$0] }
        }
        #expect(heard == (0..<Int64(heard.count)).map(Self.left), "the pause cut nothing and repeated nothing")
    }

    @Test func aFlushOfPlayedAudioIsRefusedAndOfUnplayedAudioIsDone() {
        var session = Self.ready()
        let start: UInt64 = 30_000_000_000
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start)))
        _ = session.render(frameCount: 4_410, outputChannels: 2, heardAt: Self.local(start))
        // 4,410 frames were handed to the output; a flush must leave 50 ms (2,205 frames) after them.
        #expect(session.receive(.flush(requestID: 1, fromFrame: 7_000)) == [.send(.flushResult(requestID: 1, isAccepted: true, firstUnplayedFrame: 6_615))])
        #expect(session.buffer?.endFrame == 7_000)
        // A refused flush is done from the frame the answer names, and nothing before it changes.
        #expect(session.receive(.flush(requestID: 2, fromFrame: 2_000)) == [.send(.flushResult(requestID: 2, isAccepted: false, firstUnplayedFrame: 6_615))])
        #expect(session.buffer?.endFrame == 6_615, "a refused flush cuts where it would be accepted")
        #expect(session.receive(.flush(requestID: 3, fromFrame: 6_000)) == [.send(.flushResult(requestID: 3, isAccepted: false, firstUnplayedFrame: 6_615))])
        #expect(session.buffer?.endFrame == 6_615)
        // New audio from the cut plays in its place.
        _ = session.receive(.audio(firstFrame: 6_615, frameCount: 1, samples: [0x34, 0x12, 0, 0]))
        let output = session.render(frameCount: 3_000, outputChannels: 2, heardAt: Self.local(start, plusFrames: 4_410))
        #expect(output[2 * 2_204] == Self.left(6_614) && output[2 * 2_205] == Float(0x1234) / 32_768)
    }

    @Test func aPoorClockStartsNothingAndAGoodOneStartsWhereTheTimelineHasGot() {
        var session = SpeakerSession(configuration: .init(name: "late"))
        _ = session.receive(.hello(sessionID: Array(repeating: 2, count: 16), senderName: "sender", timingPort: 7000))
        _ = session.receive(.format(AudioStreamFormat(sampleRate: UInt32(Self.rate), channelCount: 2, encoding: .signed16)))
        _ = session.receive(TestSender.ramp(0, Self.rate * 5))
        let start: UInt64 = 40_000_000_000
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start)))
        #expect(session.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start)).allSatisfy { $0 == 0 }, "no clock yet")
        // A sample with 5 ms of round trip: too uncertain to start on.
        let t1: UInt64 = 2_000_000
        let t2 = UInt64(Int64(t1 + 2_500_000) + Self.offset)
        session.receiveClockReply(ClockExchange.Reply(sequence: 0, t1: t1, t2: t2, t3: t2), at: t1 + 5_000_000)
        #expect(!session.clock.isGood)
        #expect(session.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start, plusFrames: 441)).allSatisfy { $0 == 0 })
        // A good sample: it joins the timeline 1 s in, not at its start.
        let t1b: UInt64 = 3_000_000
        let t2b = UInt64(Int64(t1b + 50_000) + Self.offset)
        session.receiveClockReply(ClockExchange.Reply(sequence: 1, t1: t1b, t2: t2b, t3: t2b), at: t1b + 100_000)
        let output = session.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start, plusFrames: Self.rate))
        #expect(output[0] == Self.left(Int64(Self.rate)), "starts at frame \(Self.rate), the timeline's place")
    }

    /// A good clock is not enough: an output still starting would hear a start's first frames late.
    @Test func theSpeakerIsReadyToPlayOnlyWithAGoodClockAndARunningOutput() {
        func isSynchronized(_ session: SpeakerSession) -> Bool? {
            if case .status(let report) = session.status() { report.isSynchronized } else { nil }
        }
        var session = Self.ready()
        #expect(session.clock.isGood && isSynchronized(session) == true)
        session.isOutputRunning = false
        #expect(!session.isReadyToPlay && isSynchronized(session) == false, "an output that does not play yet")
        let poor = SpeakerSession(configuration: .init(name: "poor"))
        #expect(isSynchronized(poor) == false, "no clock sample yet")
    }

    @Test func aNewSessionEmptiesTheBufferAndAReconnectKeepsIt() {
        var session = Self.ready()
        let reconnect = session.receive(.hello(sessionID: Array(repeating: 1, count: 16), senderName: "sender", timingPort: 7000))
        #expect(reconnect == [.send(.welcome(speakerName: "test", bufferCapacityFrames: UInt64(180 * Self.rate), bufferEndFrame: Int64(Self.rate * 10)))])
        let other = session.receive(.hello(sessionID: Array(repeating: 9, count: 16), senderName: "another", timingPort: 7000))
        #expect(other == [.send(.welcome(speakerName: "test", bufferCapacityFrames: UInt64(180 * Self.rate), bufferEndFrame: -1))])
        #expect(session.anchor == nil && session.buffer?.isEmpty == true)
    }

    @Test func channelsAndVolumeAreApplied() {
        var left = Self.ready(.init(name: "left", channels: .left))
        var right = Self.ready(.init(name: "right", channels: .right))
        let start: UInt64 = 50_000_000_000
        for index in [0, 1] {
            var session = index == 0 ? left : right
            _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start)))
            _ = session.receive(.volume(speaker: 0.5, group: 0.5))
            let output = session.render(frameCount: 100, outputChannels: 2, heardAt: Self.local(start))
            let frame = 50
            if index == 0 {
                #expect(output[2 * frame] == Self.left(50) * 0.25 && output[2 * frame + 1] == 0)
                left = session
            } else {
                #expect(output[2 * frame] == 0 && output[2 * frame + 1] == -Self.left(50) * 0.25)
                right = session
            }
        }
    }

    /// An edit of the item playing: the sender pauses at frame F and, 70 frames later on its
    /// clock, plays from F + 70. A speaker that had rendered the pause held at F; it must then play
    /// from F + 70 at that moment, as a speaker that never saw the pause does, not go on from F and
    /// chase the 70 frames with its drift correction (1.6 ms off for a second and a half, seen in
    /// the events bench, one room of three).
    @Test func aPlayAnchorAfterARenderedPauseStartsAtItsOwnFrame() {
        var session = Self.ready()
        let start: UInt64 = 70_000_000_000
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start)))
        _ = session.render(frameCount: 4_410, outputChannels: 2, heardAt: Self.local(start))
        _ = session.receive(.anchor(RateAnchor(rate: 0, mediaFrame: 4_410, networkTime: start + 100_000_000)))
        // The output renders through the pause's moment (held at 4,410 from there) ...
        _ = session.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start, plusFrames: 4_410))
        #expect(session.nextFrame == 4_410)
        // ... before the play anchor comes: 70 frames after the pause's moment, from frame 4,480.
        let play = start + 100_000_000 + 70 * 1_000_000_000 / UInt64(Self.rate)
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 4_480, networkTime: play)))
        let output = session.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start, plusFrames: 4_480))
        let left = stride(from: 0, to: output.count, by: 2).map { output[$0] }
        #expect(Array(left.prefix(5)) == (4_480..<4_485).map { Self.left(Int64($0)) }, "from the anchor's frame at its moment: \(left.prefix(5).map { Int($0 * 32_768) })")
    }

    @Test func aPauseWhilePlayingTakesEffectAtItsTimeNotOnArrival() {
        var session = Self.ready()
        let start: UInt64 = 60_000_000_000
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start)))
        _ = session.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start))
        // Sent now for 100 ms from the start: frame 4,410.
        _ = session.receive(.anchor(RateAnchor(rate: 0, mediaFrame: 4_410, networkTime: start + 100_000_000)))
        var heard: [Float] = []
        for block in 1..<20 {
            let output = session.render(frameCount: 441, outputChannels: 2, heardAt: Self.local(start, plusFrames: block * 441))
            heard += stride(from: 0, to: output.count, by: 2).map { output[$0] }
        }
        #expect(Array(heard.prefix(9 * 441)) == (441..<4_410).map { Self.left(Int64($0)) }, "played on until the pause's moment")
        #expect(heard.dropFirst(9 * 441).allSatisfy { $0 == 0 } && session.nextFrame == 4_410)
    }

    @Test func aStreamAtAnotherRateThanTheOutputIsRefusedAndNoFormatAllocatesWithoutBound() {
        var session = SpeakerSession(configuration: .init(name: "x", bufferSeconds: 3_600, outputSampleRate: 44_100))
        _ = session.receive(.hello(sessionID: Array(repeating: 1, count: 16), senderName: "s", timingPort: 1))
        let refused = session.receive(.format(AudioStreamFormat(sampleRate: 48_000, channelCount: 2, encoding: .signed16)))
        #expect(refused.contains(.close(reason: "a stream at 48000 Hz; this speaker plays 44100 Hz")))
        _ = session.receive(.format(AudioStreamFormat(sampleRate: 44_100, channelCount: 8, encoding: .float32)))
        #expect((session.buffer?.capacityFrames ?? .max) * 8 * 4 <= 256 << 20, "an hour of 8 channels is capped at 256 MiB")
    }

    /// One second of mono float audio: a 200 Hz sine (whole cycles: every second is the same), so
    /// that a seam or a doubled sample would show as a bend.
    static let sineSecond: [UInt8] = (0..<rate).flatMap { frame -> [UInt8] in
        let bits = Float(sin(Double(frame) * 2 * .pi * 200 / Double(rate)) * 0.5).bitPattern
        return [UInt8(bits & 0xFF), UInt8((bits >> 8) & 0xFF), UInt8((bits >> 16) & 0xFF), UInt8(bits >> 24)]
    }

    /// The second of sine that starts at `first` (a whole second).
    static func sine(_ first: Int64, _ count: Int) -> SpeakerMessage {
        .audio(firstFrame: first, frameCount: UInt32(count), samples: sineSecond)
    }

    // Serialized: the other suites' real-time tests share the two cores.
    @Test(.serialized, arguments: [-300.0, 80.0, 250.0])
    func driftOfTheOutputsClockIsCorrectedByResamplingWithoutASeam(ppm: Double) {
        var session = SpeakerSession(configuration: .init(name: "drift"))
        _ = session.receive(.hello(sessionID: Array(repeating: 4, count: 16), senderName: "s", timingPort: 1))
        _ = session.receive(.format(AudioStreamFormat(sampleRate: UInt32(Self.rate), channelCount: 1, encoding: .float32)))
        let t1: UInt64 = 1_000_000
        let t2 = UInt64(Int64(t1 + 50_000) + Self.offset)
        session.receiveClockReply(ClockExchange.Reply(sequence: 0, t1: t1, t2: t2, t3: t2), at: t1 + 100_000)
        let start: UInt64 = 70_000_000_000
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start)))
        // The output's crystal runs `ppm` fast: its 441 frames take that much less network time.
        let block = 441
        let blockNanoseconds = Double(block) * 1e9 / Double(Self.rate) / (1 + ppm / 1e6)
        var fed: Int64 = 0
        var history: [Float] = []
        var largestBend: Float = 0
        var errors: [Double] = []
        for index in 0..<(30 * 100) { // 30 s
            while fed < Int64((index + 200) * block) {
                _ = session.receive(Self.sine(fed, 44_100))
                fed += 44_100
            }
            let heardAt = Self.local(start) + UInt64(Double(index) * blockNanoseconds)
            let output = session.render(frameCount: block, outputChannels: 1, heardAt: heardAt)
            for sample in output {
                // The second difference of a smooth sine is tiny; a skipped or doubled sample makes it large.
                if history.count == 2 { largestBend = max(largestBend, abs(sample - 2 * history[1] + history[0])) }
                history = Array((history + [sample]).suffix(2))
            }
            // Where the output is against where the anchor says it should be, in frames.
            let network = Double(Int64(heardAt) + Self.offset) + Double(block) * 1e9 / Double(Self.rate) / (1 + ppm / 1e6)
            let target = (network - Double(start)) * Double(Self.rate) / 1e9
            if index >= 15 * 100 { errors.append(abs(Double(session.position ?? 0) - target)) }
        }
        // A 200 Hz sine at 0.5 bends by at most 0.5 × (2π·200/44100)² ≈ 0.0004 per sample; a
        // skipped or doubled sample bends it by about 0.014.
        #expect(largestBend < 0.001, "largest second difference: \(largestBend)")
        // Within a fifth of a frame (4.5 µs at 44.1 kHz), on this simulation's exact clocks (with a
        // deadband of half a frame the output sat anywhere within ±0.5).
        #expect((errors.max() ?? .infinity) < 0.2, "after 15 s, within a fifth of a frame of the timeline: worst \(errors.max() ?? .infinity)")
        // A fast output reads the stream slower: the correction is the drift's opposite.
        #expect(abs(session.rateCorrection * 1e6 + ppm) < 30, "correction \(session.rateCorrection * 1e6) ppm for \(ppm) ppm of drift")
    }

    // Serialized: as the resampling test.
    @Test(.serialized, arguments: [0.0, -300.0, 250.0])
    func aBitExactOutputPlaysEveryFrameUnchangedAndSlipsWholeFramesForDrift(ppm: Double) {
        var session = Self.ready(.init(name: "bit-exact", isBitExact: true))
        let start: UInt64 = 10_000_000_000
        // The anchor's moment a third of a frame after an output frame: a resampler would read
        // between frames from the first block on.
        let third = UInt64(1e9 / Double(Self.rate) / 3)
        _ = session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start + third)))
        let block = 441
        let blockNanoseconds = Double(block) * 1e9 / Double(Self.rate) / (1 + ppm / 1e6)
        var fed = Int64(Self.rate * 10)
        var heard: [(left: Float, right: Float)] = []
        var worstError = 0.0
        for index in 0..<(20 * 100) { // 20 s
            while fed < Int64((index + 200) * block) {
                _ = session.receive(TestSender.ramp(fed, Self.rate))
                fed += Int64(Self.rate)
            }
            let heardAt = Self.local(start) + UInt64(Double(index) * blockNanoseconds)
            let output = session.render(frameCount: block, outputChannels: 2, heardAt: heardAt)
            heard += stride(from: 0, to: output.count, by: 2).map { (output[$0], output[$0 + 1]) }
            let network = Double(Int64(heardAt) + Self.offset) + blockNanoseconds
            let target = (network - Double(start + third)) * Double(Self.rate) / 1e9
            if index > 0 { worstError = max(worstError, abs(Double(session.position ?? 0) - target)) }
        }
        // Every sample is one the sender sent, bit for bit, and the frames follow one another but
        // for a frame skipped (a step of 2) or repeated (0) now and then.
        let frames = heard.drop { $0.left == 0 }.map { sample -> Int64? in
            let value = Int16(sample.left * 32_768)
            return Float(value) / 32_768 == sample.left && sample.right == -sample.left ? Int64(value) : nil
        }
        #expect(!frames.contains(nil), "a sample that is no frame of the stream: resampled")
        let steps = zip(frames.dropFirst(), frames).map { ($0! - $1! + 16_384) % 16_384 }
        let slips = steps.filter { $0 != 1 }.count
        #expect(steps.allSatisfy { $0 <= 2 }, "only single frames skipped or repeated")
        #expect(slips == session.slippedFrames, "\(slips) slips heard, \(session.slippedFrames) counted")
        // One a frame of drift: 20 s at 300 ppm is 265 frames, less what is left within a frame
        // and the estimate's uncertainty (its legs' 50 µs: 2.2 frames) at the end.
        let uncertainty = Double(session.clock.estimate?.uncertainty ?? .max) * Double(Self.rate) / 1e9
        let expected = abs(ppm) * 1e-6 * 20 * Double(Self.rate)
        #expect(abs(Double(slips) - expected) <= 2 + uncertainty, "\(slips) slips for \(expected) frames of drift")
        #expect(ppm == 0 || (steps.contains(0) == (ppm > 0)), "a fast output repeats frames, a slow one skips them")
        // Checked at each block's end: a frame and the uncertainty, and the drift over the block since its start.
        let allowance = 1 + uncertainty + Double(block) * abs(ppm) / 1e6 + 0.01
        #expect(worstError < allowance, "within a frame and the uncertainty of the timeline: worst \(worstError), allowed \(allowance)")
    }

    @Test func malformedOrOutOfOrderMessagesCloseTheConnectionAndKeepTheAudio() {
        var fresh = SpeakerSession(configuration: .init(name: "x"))
        #expect(fresh.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: 0))) == [.close(reason: "anchor before hello")])
        var session = Self.ready()
        let wrongLength = session.receive(.audio(firstFrame: 0, frameCount: 10, samples: [1, 2, 3]))
        #expect(wrongLength == [.close(reason: "audio of 10 frames carries 3 bytes, not 40")])
        #expect(session.buffer?.endFrame == Int64(Self.rate * 10))
        #expect(session.receive(.status(SpeakerStatus(bufferEndFrame: 0, nextFrame: 0, clockOffset: 0, clockUncertainty: 0, isSynchronized: true, isPlaying: true)))
                == [.close(reason: "a speaker's message from the sender")])
    }
}
