import Crypto
import LongformSpeakerProtocol
import Testing

/// Pairing and sealed frames without sockets: the proof, the keys, and what a paired
/// connection's decoder accepts and refuses.
@Suite struct PairingTests {
    static let sessionID = [UInt8](repeating: 9, count: 16)

    /// A paired sender's sealer and the speaker's decoder, from one handshake.
    static func pairedPair(secret: String = "correct horse battery staple") throws -> (FrameSealer, SpeakerFrameDecoder) {
        let pairing = try PairingSecret(passphrase: secret)
        let keys = PairingHandshake.sessionKeys(secret: pairing, speakerNonce: PairingHandshake.makeNonce(), senderNonce: PairingHandshake.makeNonce())
        var decoder = SpeakerFrameDecoder()
        decoder.opener = FrameOpener(key: keys.senderToSpeaker)
        return (FrameSealer(key: keys.senderToSpeaker), decoder)
    }

    @Test func aProofHoldsOnlyForTheSecretAndTheNoncesItWasMadeFor() throws {
        let secret = try PairingSecret(passphrase: "correct horse battery staple\n")
        let speakerNonce = PairingHandshake.makeNonce(), senderNonce = PairingHandshake.makeNonce()
        let proof = PairingHandshake.proof(secret: secret, sessionID: Self.sessionID, speakerNonce: speakerNonce, senderNonce: senderNonce)
        #expect(PairingHandshake.isValid(proof: proof, secret: try PairingSecret(passphrase: "correct horse battery staple"),
                                         sessionID: Self.sessionID, speakerNonce: speakerNonce, senderNonce: senderNonce), "a file's last newline is not part of the secret")
        #expect(!PairingHandshake.isValid(proof: proof, secret: try PairingSecret(passphrase: "correct horse battery stapler"),
                                          sessionID: Self.sessionID, speakerNonce: speakerNonce, senderNonce: senderNonce))
        // A proof seen on the wire is no good for another challenge.
        #expect(!PairingHandshake.isValid(proof: proof, secret: secret, sessionID: Self.sessionID, speakerNonce: PairingHandshake.makeNonce(), senderNonce: senderNonce))
        #expect(throws: PairingSecret.Refusal.self) { try PairingSecret(passphrase: " \n") }
    }

    @Test func sealedFramesOpenInOrderInPiecesOfAnySizeAndHideWhatTheyCarry() throws {
        var (sealer, decoder) = try Self.pairedPair()
        let messages: [SpeakerMessage] = [.metadata(title: "A Title Nobody Should Read", artist: "Someone", album: "Private"),
                                          .audio(firstFrame: 44_100, frameCount: 2, samples: [1, 2, 3, 4, 5, 6, 7, 8]),
                                          .anchor(RateAnchor(rate: 1, mediaFrame: 44_100, networkTime: 123_456_789)), .keepAlive]
        let wire = messages.flatMap { sealer.seal($0) }
        #expect(wire.firstRange(of: Array("A Title Nobody Should Read".utf8)) == nil, "the title travels in the clear")
        #expect(wire.firstRange(of: Array("Someone".utf8)) == nil)
        var received: [SpeakerMessage] = []
        for piece in stride(from: 0, to: wire.count, by: 7) {
            decoder.append(wire[piece..<min(piece + 7, wire.count)])
            while let frame = try decoder.nextFrame() {
                if case .message(let message) = frame { received.append(message) }
            }
        }
        #expect(received == messages)
    }

    @Test func aChangedByteAReplayAnotherKeyOrAnUnsealedFrameIsRefused() throws {
        var (sealer, decoder) = try Self.pairedPair()
        let first = sealer.seal(.volume(speaker: 0.5, group: 1))
        let second = sealer.seal(.volume(speaker: 0.1, group: 1))
        // A changed byte.
        var changed = decoder
        var tampered = first
        tampered[tampered.count - 20] ^= 1
        changed.append(tampered)
        #expect(throws: SpeakerProtocolError.notAuthentic) { try changed.nextFrame() }
        // A frame played again, or out of order.
        var replayed = decoder
        replayed.append(first + first)
        #expect(try replayed.nextFrame() == .message(.volume(speaker: 0.5, group: 1)))
        #expect(throws: SpeakerProtocolError.notAuthentic) { try replayed.nextFrame() }
        var reordered = decoder
        reordered.append(second)
        #expect(throws: SpeakerProtocolError.notAuthentic) { try reordered.nextFrame() }
        // Another secret's keys.
        var (_, stranger) = try Self.pairedPair(secret: "another secret")
        stranger.append(first)
        #expect(throws: SpeakerProtocolError.notAuthentic) { try stranger.nextFrame() }
        // Plain frames after pairing, and sealed ones before it.
        var plain = decoder
        plain.append(SpeakerMessage.volume(speaker: 1, group: 1).encoded())
        #expect(throws: SpeakerProtocolError.unsealedFrame(type: 0x20)) { try plain.nextFrame() }
        var unpaired = SpeakerFrameDecoder()
        unpaired.append(first)
        #expect(throws: SpeakerProtocolError.sealedFrameBeforePairing) { try unpaired.nextFrame() }
        // A refusal may come unsealed: a speaker that did not accept the proof has no keys.
        decoder.append(SpeakerMessage.error(code: 401, message: "the pairing secret does not match").encoded())
        #expect(try decoder.nextFrame() == .message(.error(code: 401, message: "the pairing secret does not match")))
    }

    @Test func aSpeakerWithASecretHandsOnNothingBeforeAValidProofOfTheHeldHello() throws {
        let secret = try PairingSecret(passphrase: "correct horse battery staple")
        let speakerNonce = [UInt8](repeating: 3, count: PairingHandshake.nonceLength), senderNonce = [UInt8](repeating: 4, count: PairingHandshake.nonceLength)
        let hello = SpeakerMessage.hello(sessionID: Self.sessionID, senderName: "den", timingPort: 5_000)
        let proof = PairingHandshake.proof(secret: secret, sessionID: Self.sessionID, speakerNonce: speakerNonce, senderNonce: senderNonce)

        // The hello is held and challenged; the right proof hands it on with the keys.
        var pairing = SpeakerPairing(secret: secret) { speakerNonce }
        guard case .challenge(let nonce) = pairing.receive(hello) else { Issue.record("no challenge"); return }
        #expect(nonce == speakerNonce && pairing.state == .challenged(senderName: "den") && !pairing.isEncrypted)
        guard case .paired(let held, _) = pairing.receive(.proof(nonce: senderNonce, proof: proof)) else { Issue.record("not paired"); return }
        #expect(held == hello && pairing.isEncrypted)
        guard case .deliver(.keepAlive) = pairing.receive(.keepAlive) else { Issue.record("a paired connection's message was not handed on"); return }

        // A wrong proof, a message before the hello, a second hello while challenged: refused, and
        // everything after a refusal too.
        var wrong = SpeakerPairing(secret: secret) { speakerNonce }
        _ = wrong.receive(hello)
        guard case .refuse(.secretMismatch) = wrong.receive(.proof(nonce: speakerNonce, proof: proof)) else { Issue.record("a proof for other nonces was taken"); return }
        guard case .refuse(.alreadyRefused) = wrong.receive(.proof(nonce: senderNonce, proof: proof)) else { Issue.record("a refused connection paired later"); return }
        var early = SpeakerPairing(secret: secret) { speakerNonce }
        guard case .refuse(.notPaired) = early.receive(.keepAlive) else { Issue.record("a message before the hello was not refused"); return }
        var twice = SpeakerPairing(secret: secret) { speakerNonce }
        _ = twice.receive(hello)
        guard case .refuse(.notPaired) = twice.receive(hello) else { Issue.record("a second hello was not refused"); return }
        #expect(twice.state == .refused)

        // Without a secret, everything passes and nothing is sealed.
        var open = SpeakerPairing(secret: nil)
        guard case .deliver(hello) = open.receive(hello) else { Issue.record("no secret, yet the hello was held"); return }
        #expect(!open.isEncrypted)
    }

    /// What one side sealed with `sealing`, opened with `opening`: the message, or nil.
    static func open(_ message: SpeakerMessage, sealedWith sealing: SymmetricKey, openedWith opening: SymmetricKey) -> SpeakerMessage? {
        var sealer = FrameSealer(key: sealing)
        var decoder = SpeakerFrameDecoder()
        decoder.opener = FrameOpener(key: opening)
        decoder.append(sealer.seal(message))
        guard case .message(let opened)? = try? decoder.nextFrame() else { return nil }
        return opened
    }

    /// The sender's greeting against the speaker's pairing, message by message, until the sender
    /// is welcomed or fails; returns how it ended and whether the sender seals its frames.
    static func greet(senderSecret: PairingSecret?, speakerSecret: PairingSecret?) -> (outcome: String, isEncrypted: Bool) {
        let hello = SpeakerMessage.hello(sessionID: sessionID, senderName: "den", timingPort: 5_000)
        var sender = SenderPairing(hello: hello, secret: senderSecret)
        var speaker = SpeakerPairing(secret: speakerSecret)
        var toSender: SpeakerMessage
        var toSpeaker = hello
        while true {
            switch speaker.receive(toSpeaker) {
            case .deliver(let message), .paired(let message, _):
                guard message == hello else { return ("the speaker handed on \(message)", sender.isEncrypted) }
                toSender = .welcome(speakerName: "kitchen", bufferCapacityFrames: 1_000, bufferEndFrame: -1)
            case .challenge(let nonce): toSender = .challenge(nonce: nonce)
            case .refuse(let refusal): toSender = .error(code: refusal.code, message: refusal.reason)
            }
            switch sender.receive(toSender) {
            case .prove(let proof, _): toSpeaker = proof
            case .welcomed(let name, _, _): return ("welcomed by \(name)", sender.isEncrypted)
            case .fail(let reason): return (reason, sender.isEncrypted)
            case .ignore: return ("ignored \(toSender)", sender.isEncrypted)
            }
        }
    }

    @Test func theSendersGreetingAndTheSpeakersPairingAgreeWithoutASocket() throws {
        let secret = try PairingSecret(passphrase: "correct horse battery staple"), other = try PairingSecret(passphrase: "another one")
        #expect(Self.greet(senderSecret: secret, speakerSecret: secret) == ("welcomed by kitchen", true))
        #expect(Self.greet(senderSecret: other, speakerSecret: secret) == ("refused (401): the pairing secret does not match", true))
        #expect(Self.greet(senderSecret: nil, speakerSecret: secret) == ("the speaker requires a pairing secret (set LONGFORM_SPEAKER_SECRET)", false))
        #expect(Self.greet(senderSecret: secret, speakerSecret: nil) == ("welcomed by kitchen", false))

        // The keys each side derives are the other's: what one seals, the other opens, both ways.
        let hello = SpeakerMessage.hello(sessionID: Self.sessionID, senderName: "den", timingPort: 5_000)
        var sender = SenderPairing(hello: hello, secret: secret)
        var speaker = SpeakerPairing(secret: secret)
        guard case .challenge(let nonce) = speaker.receive(hello), case .prove(let proof, let senderKeys) = sender.receive(.challenge(nonce: nonce)),
              case .paired(_, let speakerKeys) = speaker.receive(proof) else { Issue.record("no pairing"); return }
        let message = SpeakerMessage.metadata(title: "t", artist: "a", album: "b")
        #expect(Self.open(message, sealedWith: senderKeys.senderToSpeaker, openedWith: speakerKeys.senderToSpeaker) == message)
        #expect(Self.open(message, sealedWith: speakerKeys.speakerToSender, openedWith: senderKeys.speakerToSender) == message)
        #expect(Self.open(message, sealedWith: senderKeys.senderToSpeaker, openedWith: senderKeys.speakerToSender) == nil, "one key for both directions")
        // A second challenge is not answered again.
        guard case .fail = sender.receive(.challenge(nonce: nonce)) else { Issue.record("a second challenge was answered"); return }
    }
}
