import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The pairing exchange's arithmetic, without I/O: the speaker's challenge, the sender's proof that
/// it knows the secret, and the two session keys both then derive. A speaker that could not make
/// the keys cannot seal its welcome, so the sender learns that the speaker knows the secret too.
public enum PairingHandshake {
    /// Bytes of each side's nonce.
    public static let nonceLength = 32
    /// Bytes of a proof (HMAC-SHA256).
    public static let proofLength = 32

    /// A fresh random nonce.
    public static func makeNonce() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<nonceLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// The sender's proof: HMAC-SHA256 under the secret of the session id and both nonces.
    public static func proof(secret: PairingSecret, sessionID: [UInt8], speakerNonce: [UInt8], senderNonce: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: provenBytes(sessionID: sessionID, speakerNonce: speakerNonce, senderNonce: senderNonce), using: secret.key))
    }

    /// Whether `proof` was made with this secret (compared in constant time).
    public static func isValid(proof: [UInt8], secret: PairingSecret, sessionID: [UInt8], speakerNonce: [UInt8], senderNonce: [UInt8]) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(proof, authenticating: provenBytes(sessionID: sessionID, speakerNonce: speakerNonce, senderNonce: senderNonce),
                                               using: secret.key)
    }

    /// What a proof authenticates: a label, the session id and both nonces.
    private static func provenBytes(sessionID: [UInt8], speakerNonce: [UInt8], senderNonce: [UInt8]) -> [UInt8] {
        Array("longform pairing proof".utf8) + sessionID + speakerNonce + senderNonce
    }

    /// The keys of one connection, one per direction.
    public struct SessionKeys: Sendable {
        /// Seals what the sender sends.
        public let senderToSpeaker: SymmetricKey
        /// Seals what the speaker sends.
        public let speakerToSender: SymmetricKey
    }

    /// Both directions' keys, from the secret and both nonces (new for every connection).
    public static func sessionKeys(secret: PairingSecret, speakerNonce: [UInt8], senderNonce: [UInt8]) -> SessionKeys {
        let salt = Data(speakerNonce + senderNonce)
        func key(_ direction: String) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(inputKeyMaterial: secret.key, salt: salt, info: Data(direction.utf8), outputByteCount: 32)
        }
        return SessionKeys(senderToSpeaker: key("sender to speaker"), speakerToSender: key("speaker to sender"))
    }
}
