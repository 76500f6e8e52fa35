import Foundation
import LongformCore
import LongformSpeakerProtocol
import LongformTestSupport
import Synchronization
import Testing

/// `longform speaker` under connections that never become its sender (issue 23): held ones that
/// trickle bytes or unknown frames, and a flood of garbage ones. A listener hears the sender's
/// audio without a gap, the sender gets back in within 2 s, the strangers' connections are closed
/// within 5 s, and the log stays short.
@Suite(.serialized) struct SpeakerAdmissionTests {
    static let rate = 44_100
    static let secret = "a long random secret for the admission tests"

    /// `longform speaker` writing a WAV file, with the pairing secret when `paired`.
    static func speaker(name: String, paired: Bool) throws -> SpeakerProcess {
        guard paired else { return try SpeakerProcess(name: name) }
        let secretFile = TestAudio.path("admission-secret-\(UUID().uuidString.prefix(8))")
        try (secret + "\n").write(toFile: secretFile, atomically: true, encoding: .utf8)
        return try SpeakerProcess(name: name, extraArguments: ["--secret-file", secretFile])
    }

    /// The warning lines in a speaker's log.
    static func warnings(in log: String) -> [Substring] {
        log.split(separator: "\n").filter { $0.contains(" warning ") }
    }

    /// Eight held connections and 4,000 garbage ones at 1,000 a second: the sender, gone and back
    /// in the middle of it, gets its welcome within 2 s and its audio plays on in one piece.
    @Test(arguments: [false, true]) func aSenderGetsBackInThroughHeldConnectionsAndAFlood(paired: Bool) throws {
        let speaker = try Self.speaker(name: "porch", paired: paired)
        defer { speaker.stop() }
        let secret = paired ? try PairingSecret(passphrase: Self.secret) : nil
        let session = Array(repeating: UInt8(23), count: 16)

        // 6 s of the ramp, played from 0.2 s after a good clock.
        let first = try TestSender(speakerPort: speaker.port, secret: secret)
        try first.send(.hello(sessionID: session, senderName: "admission test", timingPort: first.timingPort))
        #expect(first.waitFor { if case .welcome = $0 { true } else { nil } } == true, "\(speaker.output)")
        try first.send(.format(AudioStreamFormat(sampleRate: UInt32(Self.rate), channelCount: 2, encoding: .signed16)), TestSender.ramp(0, 6 * Self.rate))
        Thread.sleep(forTimeInterval: 1.2)
        let start = HostClock.now() + 200_000_000
        try first.send(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: start)))

        // The strangers: eight held (a slow header, unknown frames, with a secret a hello never
        // proven), then the flood.
        let kinds = (0..<8).map { paired ? HostileConnections.Kind.allCases[$0 % 3] : [.slowHeader, .unknownFrames][$0 % 2] }
        let held = try HostileConnections.Held(port: speaker.port, kinds: kinds)
        defer { held.stop() }
        Thread.sleep(forTimeInterval: 0.5)
        let flood = Mutex<HostileConnections.FloodResult?>(nil)
        HostileConnections.flood(port: speaker.port, count: 4_000, perSecond: 1_000) { result in flood.withLock { $0 = result } }

        // 1.5 s into the flood the sender leaves and comes back with the same session.
        Thread.sleep(forTimeInterval: 1.5)
        first.close()
        Thread.sleep(forTimeInterval: 0.2)
        let connecting = Date()
        let second = try TestSender(speakerPort: speaker.port, secret: secret)
        try second.send(.hello(sessionID: session, senderName: "admission test", timingPort: second.timingPort))
        let bufferEnd = second.waitFor(timeout: 2) { if case .welcome(_, _, let end) = $0 { end } else { nil } }
        let welcomeSeconds = Date().timeIntervalSince(connecting)
        let refusal = second.messages.lazy.compactMap { if case .error(let code, let text) = $0 { "\(code): \(text)" } else { nil } }.first
        #expect(bufferEnd == Int64(6 * Self.rate), "welcome after \(welcomeSeconds) s, \(refusal ?? "no refusal")")
        print("admission (paired: \(paired)): the sender's welcome came \(String(format: "%.3f", welcomeSeconds)) s after it connected, during the flood")
        // 2 s more, straight after what the speaker holds.
        if bufferEnd != nil { try second.send(TestSender.ramp(Int64(6 * Self.rate), 2 * Self.rate)) }

        // The flood ends; every held connection was closed within 5 s of opening (and a margin).
        let floodDeadline = Date().addingTimeInterval(8)
        while flood.withLock({ $0 }) == nil && Date() < floodDeadline { Thread.sleep(forTimeInterval: 0.05) }
        let result = try #require(flood.withLock { $0 })
        print("admission (paired: \(paired)): flood \(result); held closed after \(held.closedAfter.map { $0.map { String(format: "%.2f s", $0) } ?? "never" })")
        #expect(result.opened >= 3_000, "\(result)")
        #expect(held.closedAfter.allSatisfy { $0 != nil && $0! <= 6 }, "\(held.closedAfter)")

        // Until the 8 s have played: one piece, every frame once.
        let end = start + 8_500_000_000
        if HostClock.now() < end { Thread.sleep(forTimeInterval: Double(end - HostClock.now()) / 1e9) }
        speaker.stop()
        let log = speaker.output
        let played = try RampAudio.played(wav: speaker.outputPath)
        let piece = try #require(played.pieces.first, "nothing played: \(log.suffix(2_000))")
        #expect(played.pieces.count == 1 && piece.values.first == 1 && piece.isContinuous(tolerance: 2), "\(played)")
        #expect(abs(piece.count - (8 * Self.rate - 1)) <= 45 + RampAudio.resamplingAllowance(piece.count), "\(played)")

        // A few warnings, and one line counting the rest.
        let warnings = Self.warnings(in: log)
        print("admission (paired: \(paired)): \(warnings.count) warning lines; the last: \(warnings.last ?? "none")")
        #expect(warnings.count <= 12, "\(warnings.count) warning lines: \(warnings.prefix(20))")
        #expect(warnings.last?.contains("more warnings about connections not logged") == true, "\(warnings.suffix(3))")
    }

    /// Without a flood, connections that trickle bytes, skip unknown frames or never prove the
    /// secret are closed 5 s after they opened, each with one warning.
    @Test func connectionsThatDoNotBecomeTheSenderAreClosedAfterFiveSeconds() throws {
        let speaker = try Self.speaker(name: "hall", paired: true)
        defer { speaker.stop() }
        let held = try HostileConnections.Held(port: speaker.port, kinds: HostileConnections.Kind.allCases)
        defer { held.stop() }
        let deadline = Date().addingTimeInterval(8)
        while held.closedAfter.contains(where: { $0 == nil }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        print("admission: held closed after \(held.closedAfter.map { $0.map { String(format: "%.2f s", $0) } ?? "never" })")
        #expect(held.closedAfter.allSatisfy { $0 != nil && $0! >= 4.5 && $0! <= 6 }, "\(held.closedAfter)")
        speaker.stop()
        let warnings = Self.warnings(in: speaker.output)
        #expect(warnings.filter { $0.contains("within 5 s") }.count == 3, "\(warnings)")
    }
}
