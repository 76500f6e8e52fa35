import Foundation
import LongformTestSupport
import Testing

/// A speaker that requires a pairing secret, with `longform play` as the sender: heard with the
/// secret, refused (and silent) without it or with another one.
@Suite(.serialized) struct SpeakerPairingTests {
    static let secret = "a long random secret for the tests"

    /// Plays a 2 s ramp to a speaker that requires `secret`, the sender given `senderSecret`;
    /// returns the speaker's log, the sender's, and the speaker's output.
    func play(senderSecret: String?) throws -> (speaker: String, sender: String, played: RampAudio.Played) {
        let secretFile = TestAudio.path("pairing-secret-\(UUID().uuidString.prefix(8))")
        try (Self.secret + "\n").write(toFile: secretFile, atomically: true, encoding: .utf8)
        let speaker = try SpeakerProcess(name: "study", extraArguments: ["--secret-file", secretFile])
        defer { speaker.stop() }
        let ramp = try RampAudio.file(named: "pairing-ramp-2s", seconds: 2)
        let state = TestAudio.path("pairing-state-\(UUID().uuidString.prefix(8))")
        let play = try ExternalTool.run(ExternalTool.longformExecutable, ["play", "--route", "speaker:" + speaker.endpoint(), "--state", state, ramp],
                                        environment: senderSecret.map { ["LONGFORM_SPEAKER_SECRET": $0] } ?? [:])
        Thread.sleep(forTimeInterval: 0.5)
        speaker.stop()
        return (speaker.output, play.output + play.errorOutput, try RampAudio.played(wav: speaker.outputPath))
    }

    @Test func aSenderWithTheSecretIsHeardEncrypted() throws {
        let (speaker, sender, played) = try play(senderSecret: Self.secret)
        #expect(sender.contains("(paired, encrypted)"), "\(sender)")
        #expect(speaker.contains("now playing pairing-ramp-2s.wav"), "\(speaker)")
        let piece = try #require(played.pieces.first, "nothing played: \(speaker)")
        #expect(played.pieces.count == 1 && piece.isContinuous(tolerance: 2) && piece.values.first == 1, "\(played)")
        #expect(abs(piece.count - (2 * 44_100 - 1)) <= 45 + RampAudio.resamplingAllowance(piece.count), "\(played)")
    }

    @Test func aSenderWithoutTheSecretIsRefusedAndNothingIsPlayed() throws {
        let (speaker, sender, played) = try play(senderSecret: nil)
        #expect(sender.contains("the speaker requires a pairing secret"), "\(sender)")
        #expect(speaker.contains("requires a secret"), "\(speaker)")
        #expect(played.pieces.isEmpty, "\(played)")
    }

    @Test func aSenderWithAnotherSecretIsRefusedAndNothingIsPlayed() throws {
        let (speaker, sender, played) = try play(senderSecret: "a guess")
        #expect(sender.contains("refused (401): the pairing secret does not match"), "\(sender)")
        #expect(speaker.contains("its pairing secret does not match"), "\(speaker)")
        #expect(!speaker.contains("now playing"), "\(speaker)")
        #expect(played.pieces.isEmpty, "\(played)")
    }
}
