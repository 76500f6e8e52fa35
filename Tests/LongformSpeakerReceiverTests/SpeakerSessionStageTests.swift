import LongformSpeakerProtocol
import LongformSpeakerReceiver
import Testing

/// How a sender sets a speaker's session up, stage by stage: what each stage takes and refuses,
/// and what a new session, a reconnect and a new format keep.
@Suite struct SpeakerSessionStageTests {
    static let first = [UInt8](repeating: 1, count: 16), second = [UInt8](repeating: 2, count: 16)
    static let stereo = AudioStreamFormat(sampleRate: 44_100, channelCount: 2, encoding: .signed16)
    static let mono48k = AudioStreamFormat(sampleRate: 48_000, channelCount: 1, encoding: .signed16)

    static func hello(_ id: [UInt8]) -> SpeakerMessage { .hello(sessionID: id, senderName: "sender", timingPort: 7000) }

    @Test func aNewSessionTakesOnlyAHello() {
        var session = SpeakerSession(configuration: .init(name: "s"))
        guard case .awaitingHello = session.stage else { Issue.record("stage \(session.stage)"); return }
        #expect(session.receive(.format(Self.stereo)) == [.close(reason: "format before hello")])
        #expect(session.receive(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: 0))) == [.close(reason: "anchor before hello")])
        #expect(session.receive(TestSender.ramp(0, 10)) == [.close(reason: "audio before a format")])
        guard case .awaitingHello = session.stage else { Issue.record("stage \(session.stage)"); return }
    }

    @Test func aHelloGreetsAndAudioWaitsForTheFormat() {
        var session = SpeakerSession(configuration: .init(name: "s"))
        _ = session.receive(Self.hello(Self.first))
        guard case .greeted(let id) = session.stage, id == Self.first else { Issue.record("stage \(session.stage)"); return }
        #expect(session.receive(TestSender.ramp(0, 10)) == [.close(reason: "audio before a format")])
        #expect(session.format == nil && session.buffer == nil)
    }

    @Test func aFormatStartsStreamingIntoABufferSizedForIt() {
        var session = SpeakerSession(configuration: .init(name: "s", bufferSeconds: 60))
        _ = session.receive(Self.hello(Self.first))
        _ = session.receive(.format(Self.stereo))
        guard case .streaming(let id, let format, let buffer) = session.stage else { Issue.record("stage \(session.stage)"); return }
        #expect(id == Self.first && format == Self.stereo)
        #expect(buffer.capacityFrames == 60 * 44_100 && buffer.channelCount == 2 && buffer.isEmpty)
        #expect(session.receive(TestSender.ramp(0, 4_410)) == [])
        #expect(session.buffer?.endFrame == 4_410)
    }

    @Test func aNewSessionKeepsTheFormatAndEmptiesTheBufferAndAReconnectKeepsBoth() {
        var session = SpeakerSession(configuration: .init(name: "s"))
        _ = session.receive(Self.hello(Self.first))
        _ = session.receive(.format(Self.stereo))
        _ = session.receive(TestSender.ramp(0, 4_410))
        _ = session.receive(Self.hello(Self.first))
        guard case .streaming(Self.first, Self.stereo, let kept) = session.stage else { Issue.record("stage \(session.stage)"); return }
        #expect(kept.endFrame == 4_410)
        _ = session.receive(Self.hello(Self.second))
        guard case .streaming(Self.second, Self.stereo, let emptied) = session.stage else { Issue.record("stage \(session.stage)"); return }
        #expect(emptied.isEmpty)
        // Audio is taken at once, without a format again.
        #expect(session.receive(TestSender.ramp(100, 10)) == [])
        #expect(session.buffer?.startFrame == 100 && session.buffer?.endFrame == 110)
    }

    @Test func anotherFormatReplacesTheBufferAndTheSameOneKeepsIt() {
        var session = SpeakerSession(configuration: .init(name: "s", bufferSeconds: 10))
        _ = session.receive(Self.hello(Self.first))
        _ = session.receive(.format(Self.stereo))
        _ = session.receive(TestSender.ramp(0, 4_410))
        _ = session.receive(.format(Self.stereo))
        #expect(session.buffer?.endFrame == 4_410)
        _ = session.receive(.format(Self.mono48k))
        guard case .streaming(Self.first, Self.mono48k, let buffer) = session.stage else { Issue.record("stage \(session.stage)"); return }
        #expect(buffer.isEmpty && buffer.channelCount == 1 && buffer.capacityFrames == 480_000)
    }
}
