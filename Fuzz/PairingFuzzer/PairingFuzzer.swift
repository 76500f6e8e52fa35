import FuzzSupport
import LongformSpeakerProtocol

/// A speaker's pairing (`SpeakerPairing`, with a secret) against any sequence of messages a
/// stranger sends (the frames they arrive in are `speaker-frames`'): each input byte picks the next
/// message, and the bytes after it fill it. A hello, a proof of raw bytes, a proof made with the
/// secret for the challenge (so that the paired state is reached), a challenge, or another message.
/// Invariants: nothing is handed on before a valid proof of the held hello; the hello handed on is
/// the one challenged, with the keys both sides derive; at most one challenge and one pairing;
/// after a refusal, only refusals. And the good path is taken: a first hello is challenged, a proof
/// made with the secret for it pairs, and after pairing every message is handed on.
enum PairingFuzzer {
    static let secret = try! PairingSecret(passphrase: "fuzzing")
    static let speakerNonce = [UInt8](repeating: 5, count: PairingHandshake.nonceLength)

    static func run(_ input: [UInt8]) {
        var bytes = input[...]
        /// The next `count` bytes (zeros past the end).
        func take(_ count: Int) -> [UInt8] {
            let taken = Array(bytes.prefix(count))
            bytes = bytes.dropFirst(count)
            return taken + [UInt8](repeating: 0, count: count - taken.count)
        }
        var pairing = SpeakerPairing(secret: secret) { speakerNonce }
        var challenged: SpeakerMessage?, isPaired = false, isRefused = false
        while let choice = bytes.popFirst() {
            let message: SpeakerMessage
            var isProofWithTheSecret = false
            switch choice % 8 {
            case 0: message = .hello(sessionID: take(16), senderName: "fuzz", timingPort: 1)
            case 1: message = .proof(nonce: take(32), proof: take(32))
            case 2:
                let senderNonce = take(32)
                guard case .hello(let sessionID, _, _)? = challenged else { message = .proof(nonce: senderNonce, proof: take(32)); break }
                message = .proof(nonce: senderNonce, proof: PairingHandshake.proof(secret: secret, sessionID: sessionID, speakerNonce: speakerNonce, senderNonce: senderNonce))
                isProofWithTheSecret = !isPaired
            case 3: message = .challenge(nonce: take(32))
            case 4: message = .keepAlive
            case 5: message = .flush(requestID: 1, fromFrame: 0)
            case 6: message = .error(code: 401, message: "fuzz")
            default: message = .metadata(title: "t", artist: "a", album: "b")
            }
            let action = pairing.receive(message)
            if isRefused {
                guard case .refuse(.alreadyRefused) = action else { FuzzInput.fail("\(action) after a refusal") }
                continue
            }
            // The good path is taken.
            if isPaired { guard case .deliver = action else { FuzzInput.fail("\(message) after pairing: \(action)") } }
            if challenged == nil, !isPaired, case .hello = message { guard case .challenge = action else { FuzzInput.fail("a first hello was answered \(action)") } }
            if isProofWithTheSecret { guard case .paired = action else { FuzzInput.fail("a proof made with the secret was answered \(action)") } }
            switch action {
            case .deliver(let delivered):
                FuzzInput.require(isPaired && delivered == message, "\(delivered) handed on before pairing")
            case .challenge(let nonce):
                FuzzInput.require(challenged == nil && nonce == speakerNonce, "a second challenge")
                guard case .hello = message else { FuzzInput.fail("\(message) challenged") }
                challenged = message
            case .paired(let hello, let keys):
                guard case .hello(let sessionID, _, _)? = challenged, hello == challenged, !isPaired,
                      case .proof(let senderNonce, let proof) = message,
                      PairingHandshake.isValid(proof: proof, secret: secret, sessionID: sessionID, speakerNonce: speakerNonce, senderNonce: senderNonce) else {
                    FuzzInput.fail("paired on \(message) for \(String(describing: challenged))")
                }
                // The keys are the ones the sender derives: what it seals, the speaker opens.
                let expected = PairingHandshake.sessionKeys(secret: secret, speakerNonce: speakerNonce, senderNonce: senderNonce)
                var sealer = FrameSealer(key: expected.senderToSpeaker)
                var opener = SpeakerFrameDecoder()
                opener.opener = FrameOpener(key: keys.senderToSpeaker)
                opener.append(sealer.seal(.keepAlive))
                FuzzInput.require((try? opener.nextFrame()) == .message(.keepAlive), "the speaker's key does not open the sender's frames")
                isPaired = true
            case .refuse:
                FuzzInput.require(pairing.state == .refused, "refused, yet \(pairing.state)")
                isRefused = true
            }
        }
    }
}

/// Runs under libFuzzer or replays saved inputs (see `FuzzInput`).
@main struct PairingFuzzerMain {
    static func main() { FuzzInput.main(PairingFuzzer.run) }
}
