/// The speaker's side of pairing on one connection, without I/O: each message the connection
/// receives goes in, and what to do with it comes out. With a secret, the sender's hello is held
/// and answered with a challenge, and is delivered only once its proof shows that the sender knows
/// the secret; nothing else is delivered before. Without a secret every message passes.
///
/// Invariant: `deliver` and `paired` are the only actions that hand a message on, and with a secret
/// neither comes before a valid proof of the held hello. After `refuse` the machine refuses everything.
public struct SpeakerPairing: Sendable {
    /// What the connection does with a message it received.
    public enum Action: Sendable {
        /// Handle the message now.
        case deliver(SpeakerMessage)
        /// Send a challenge with this nonce; the hello waits for its proof.
        case challenge(nonce: [UInt8])
        /// The proof is valid: from now on open and seal every frame with `keys`, then handle `hello`.
        case paired(hello: SpeakerMessage, keys: PairingHandshake.SessionKeys)
        /// Answer with the refusal's error, and close.
        case refuse(Refusal)
    }

    /// Why a connection is refused.
    public enum Refusal: Sendable, Equatable {
        /// The proof was not made with this speaker's secret.
        case secretMismatch
        /// A message of this type came before the pairing was proven.
        case notPaired(messageType: UInt8)
        /// A message came after an earlier refusal.
        case alreadyRefused

        /// The error code sent to the sender.
        public var code: UInt16 { self == .alreadyRefused ? 400 : 401 }
        /// The error message sent to the sender.
        public var reason: String {
            switch self {
            case .secretMismatch: "the pairing secret does not match"
            case .notPaired: "this speaker requires a pairing secret"
            case .alreadyRefused: "the connection is closing"
            }
        }
    }

    /// Where the connection stands.
    public enum State: Sendable, Equatable {
        /// A secret is required and no hello has come yet.
        case open
        /// The hello from `senderName` waits for its proof of the secret.
        case challenged(senderName: String)
        /// Proven (or no secret): messages pass.
        case paired
        /// Refused: the connection is closing (and the refusal was its warning, so no other follows).
        case refused
    }

    private let secret: PairingSecret?
    private let makeNonce: @Sendable () -> [UInt8]
    private var heldHello: (hello: SpeakerMessage, sessionID: [UInt8], nonce: [UInt8])?
    /// Where the connection stands now.
    public private(set) var state: State

    /// The pairing of a connection to a speaker with `secret` (nil: none required); `makeNonce`
    /// makes each challenge's nonce (fixed ones only in tests and fuzzing).
    public init(secret: PairingSecret?, makeNonce: @escaping @Sendable () -> [UInt8] = PairingHandshake.makeNonce) {
        self.secret = secret
        self.makeNonce = makeNonce
        state = secret == nil ? .paired : .open
    }

    /// Whether a secret is required and has been proven: frames both ways are sealed.
    public var isEncrypted: Bool { secret != nil && state == .paired }

    /// Takes one received message.
    public mutating func receive(_ message: SpeakerMessage) -> Action {
        switch (state, message) {
        case (.refused, _):
            return .refuse(.alreadyRefused)
        case (.paired, _):
            return .deliver(message)
        case (.open, .hello(let sessionID, let senderName, _)):
            let nonce = makeNonce()
            heldHello = (message, sessionID, nonce)
            state = .challenged(senderName: senderName)
            return .challenge(nonce: nonce)
        case (.challenged, .proof(let senderNonce, let proof)):
            guard let secret, let held = heldHello,
                  PairingHandshake.isValid(proof: proof, secret: secret, sessionID: held.sessionID, speakerNonce: held.nonce, senderNonce: senderNonce) else {
                return refuse(.secretMismatch)
            }
            heldHello = nil
            state = .paired
            return .paired(hello: held.hello, keys: PairingHandshake.sessionKeys(secret: secret, speakerNonce: held.nonce, senderNonce: senderNonce))
        default:
            return refuse(.notPaired(messageType: message.type))
        }
    }

    private mutating func refuse(_ refusal: Refusal) -> Action {
        heldHello = nil
        state = .refused
        return .refuse(refusal)
    }
}
