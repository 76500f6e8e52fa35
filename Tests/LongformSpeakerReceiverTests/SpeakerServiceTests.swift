import Foundation
import LongformCore
import LongformRoutes
import LongformSpeakerReceiver
import LongformSpeakerProtocol
import LongformTestSupport
import Synchronization
import Testing

/// A speaker on real loopback sockets, playing to a monitored null route: what comes out is the
/// sender's audio, from the anchored frame at the anchored time; a second sender and bad bytes
/// change nothing, a refused flush nothing before the frame it names.
@Suite struct SpeakerServiceTests {
    static let rate = 44_100

    /// What the null route played (`HeardAudio`), with the host time of its first period.
    final class Recording: @unchecked Sendable {
        let heard = HeardAudio(channelCount: 2)
        let anchor = Mutex<(frame: Int64, hostTime: UInt64)?>(nil)

        func record(_ first: Int64, _ hostTime: UInt64, _ samples: UnsafeBufferPointer<Float>) {
            anchor.withLock { if $0 == nil { $0 = (first, hostTime) } }
            heard.record(firstFrame: first, samples: samples)
        }

        /// The host time at which route frame `frame` was heard.
        func hostTime(ofFrame frame: Int64) -> UInt64 {
            let (first, time) = anchor.withLock { $0! }
            return UInt64(Int64(time) + (frame - first) * 1_000_000_000 / Int64(SpeakerServiceTests.rate))
        }
    }

    @Test func theAnchoredFrameComesOutAtItsTimeAndEverySampleFollows() throws {
        let recording = Recording()
        let route = NullRoute(sampleRate: Self.rate, channelCount: 2, periodSeconds: 0.02) { recording.record($0, $1, $2) }
        let speaker = SpeakerService(configuration: .init(name: "kitchen"), route: route)
        let port = try speaker.start(host: "127.0.0.1", port: 0)
        defer { speaker.stop() }

        let sender = try TestSender(speakerPort: port)
        try sender.send(.hello(sessionID: Array(repeating: 5, count: 16), senderName: "test sender", timingPort: sender.timingPort),
                        .format(AudioStreamFormat(sampleRate: UInt32(Self.rate), channelCount: 2, encoding: .signed16)))
        let welcome = sender.waitFor { if case .welcome(let name, _, let end) = $0 { (name, end) } else { nil } }
        #expect(welcome?.0 == "kitchen" && welcome?.1 == -1)
        // Three seconds of audio, sent at once: it is buffered, not played.
        try sender.send(TestSender.ramp(0, Self.rate * 3))
        // Wait for a good clock (ten requests a second).
        let deadline = Date().addingTimeInterval(5)
        while !speaker.withSession({ $0.clock.isGood }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(speaker.withSession { $0.clock.isGood })

        let start = HostClock.now() + 300_000_000
        try sender.send(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start)))
        Thread.sleep(forTimeInterval: 1.5)
        let heard = recording.heard.samples
        let left = stride(from: 0, to: heard.count, by: 2).map { heard[$0] }
        // Frame 0 is silent (its value is 0): frame 1 is the first sound.
        let firstSound = try #require(left.firstIndex { $0 != 0 })
        #expect(abs(left[firstSound] - 1 / 32_768) < 0.5 / 32_768, "the first sound is frame 1")
        // The ramp rises by one step a frame (by a hair more or less while the speaker corrects
        // its output's drift by resampling), and wraps every 16,384 frames: a lost or doubled
        // frame would be a step of 2 or 0.
        let bad = SpeakerServiceTests.firstSeam(in: Array(left[firstSound...]), step: 1 / 32_768)
        #expect(bad == nil, "a seam at frame \(bad ?? -1) after the first sound")
        #expect(left.count - firstSound > Self.rate, "over a second played")
        let error = Double(Int64(recording.hostTime(ofFrame: Int64(firstSound - 1))) - Int64(start)) / 1e6
        #expect(abs(error) < 1, "frame 0 heard \(error) ms from its anchored time")

        // A flush of what was played is refused; of what was not, done.
        try sender.send(.flush(requestID: 1, fromFrame: 100), .flush(requestID: 2, fromFrame: Int64(Self.rate * 2 + 500)))
        let refused = sender.waitFor { if case .flushResult(1, let accepted, let first) = $0 { (accepted, first) } else { nil } }
        let done = sender.waitFor { if case .flushResult(2, let accepted, _) = $0 { accepted } else { nil } }
        #expect(refused?.0 == false && (refused?.1 ?? 0) > Int64(Self.rate))
        #expect(done == true)
        // The refused one cut where it would be accepted; the later one, before that if it came later.
        #expect(speaker.withSession { $0.buffer?.endFrame } == min(refused?.1 ?? 0, Int64(Self.rate * 2 + 500)))

        // Statuses come every second (and while audio arrives): one says it plays, synchronised.
        let status = sender.waitFor(timeout: 3) { if case .status(let status) = $0, status.isPlaying { status } else { nil } }
        #expect(status?.isSynchronized == true, "\(String(describing: status))")
    }

    /// The index of the first step of `samples` that is not within 20 % of `step` (the frames
    /// around a wrap of the ramp back to 0 excepted), or nil.
    static func firstSeam(in samples: [Float], step: Float) -> Int? {
        for index in 1..<samples.count {
            let difference = samples[index] - samples[index - 1]
            // Where the ramp wraps back to 0, interpolation blurs a few frames: not a seam.
            if samples[max(0, index - 4)...min(samples.count - 1, index + 4)].contains(where: { $0 < 64 / 32_768 || $0 > 16_320 / 32_768 }) { continue }
            if abs(difference - step) > step * 0.2 { return index }
        }
        return nil
    }

    @Test func aSecondSenderAndBadBytesAreRefusedAndTheAudioStays() throws {
        let route = NullRoute(sampleRate: Self.rate, channelCount: 2, periodSeconds: 0.02)
        let speaker = SpeakerService(configuration: .init(name: "den"), route: route)
        let port = try speaker.start(host: "127.0.0.1", port: 0)
        defer { speaker.stop() }
        let first = try TestSender(speakerPort: port)
        try first.send(.hello(sessionID: Array(repeating: 1, count: 16), senderName: "first", timingPort: first.timingPort),
                       .format(AudioStreamFormat(sampleRate: UInt32(Self.rate), channelCount: 2, encoding: .signed16)),
                       TestSender.ramp(0, Self.rate))
        _ = first.waitFor { if case .welcome = $0 { true } else { nil } }

        let second = try TestSender(speakerPort: port)
        try second.send(.hello(sessionID: Array(repeating: 2, count: 16), senderName: "second", timingPort: second.timingPort))
        let busy = second.waitFor { if case .error(let code, let message) = $0 { (code, message) } else { nil } }
        #expect(busy?.0 == 409 && busy?.1 == "busy: playing for first")

        // Garbage, an absurd length and an unknown version: each connection is closed.
        for bytes: [UInt8] in [Array("GET / HTTP/1.1\r\n\r\n".utf8), [0x4C, 0x46, 2, 0x11, 0xFF, 0xFF, 0xFF, 0xFF], [0x4C, 0x46, 7, 0x30, 0, 0, 0, 0]] {
            let hostile = try TestSender(speakerPort: port)
            try hostile.send(bytes: bytes)
            let deadline = Date().addingTimeInterval(3)
            while !hostile.wasClosed && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            #expect(hostile.wasClosed, "\(bytes.prefix(8))")
        }
        // A flood of datagrams at the clock port would be dropped unanswered; the first sender's audio is untouched.
        #expect(speaker.withSession { ($0.buffer?.startFrame, $0.buffer?.endFrame) } == (0, Int64(Self.rate)))
        #expect(speaker.senderName == "first")
        // When the first sender leaves, another may come.
        first.close()
        let deadline = Date().addingTimeInterval(3)
        while speaker.senderName != nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let third = try TestSender(speakerPort: port)
        try third.send(.hello(sessionID: Array(repeating: 3, count: 16), senderName: "third", timingPort: third.timingPort))
        #expect(third.waitFor { if case .welcome = $0 { true } else { nil } } == true)
    }
}
