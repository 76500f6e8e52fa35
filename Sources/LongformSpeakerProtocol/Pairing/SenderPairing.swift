/// The sender's side of the greeting on one connection, without I/O: after its hello, each message
/// the speaker sends goes in until the welcome, and what to do comes out. A speaker with a secret
/// challenges the hello; the sender answers with its proof and seals and opens every later frame,
/// so that the welcome opens only if the speaker knows the secret too. The speaker's side is
/// `SpeakerPairing`.
public struct SenderPairing: Sendable {
    /// What the connection does with a message the speaker sent.
    public enum Action: Sendable {
        /// Send this proof, then seal and open every later frame with `keys`.
        case prove(SpeakerMessage, keys: PairingHandshake.SessionKeys)
        /// Welcomed: the greeting is over.
        case welcomed(speakerName: String, bufferCapacityFrames: UInt64, bufferEndFrame: Int64)
        /// The connection cannot go on, for this reason.
        case fail(String)
        /// Nothing to do (a message the greeting does not concern).
        case ignore
    }

    private let secret: PairingSecret?
    private let hello: SpeakerMessage
    private let makeNonce: @Sendable () -> [UInt8]
    /// Whether the sender has answered a challenge: from its proof on, frames both ways are sealed
    /// (the speaker may still refuse the proof).
    public private(set) var isEncrypted = false

    /// The greeting of a sender that sent `hello`, knowing `secret` (nil: a speaker that challenges
    /// is refused); `makeNonce` makes the sender's nonce (fixed ones only in tests).
    public init(hello: SpeakerMessage, secret: PairingSecret?, makeNonce: @escaping @Sendable () -> [UInt8] = PairingHandshake.makeNonce) {
        self.hello = hello
        self.secret = secret
        self.makeNonce = makeNonce
    }

    /// Takes one message from the speaker.
    public mutating func receive(_ message: SpeakerMessage) -> Action {
        switch message {
        case .challenge(let speakerNonce):
            // One challenge per connection: a second would have the sender prove itself again under new keys.
            guard let secret, !isEncrypted, case .hello(let sessionID, _, _) = hello else {
                return .fail("the speaker requires a pairing secret (set \(PairingSecret.environmentVariable))")
            }
            let senderNonce = makeNonce()
            let proof = PairingHandshake.proof(secret: secret, sessionID: sessionID, speakerNonce: speakerNonce, senderNonce: senderNonce)
            isEncrypted = true
            return .prove(.proof(nonce: senderNonce, proof: proof), keys: PairingHandshake.sessionKeys(secret: secret, speakerNonce: speakerNonce, senderNonce: senderNonce))
        case .welcome(let name, let capacity, let end):
            return .welcomed(speakerName: name, bufferCapacityFrames: capacity, bufferEndFrame: end)
        case .error(let code, let text):
            return .fail("refused (\(code)): \(text)")
        default:
            return .ignore
        }
    }
}
