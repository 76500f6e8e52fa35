import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The secret a speaker can require of its senders (docs/speaker-protocol.md, "Pairing"): a
/// passphrase both sides are given, kept only as the key derived from it.
public struct PairingSecret: Sendable {
    /// HKDF-SHA256 of the passphrase: what proofs and session keys are made from.
    let key: SymmetricKey

    /// Why a passphrase cannot be a secret.
    public struct Refusal: Error, CustomStringConvertible {
        /// `"the pairing secret is empty"`.
        public var description: String
    }

    /// The secret for `passphrase` (leading and trailing whitespace, such as a file's last newline, is not part of it).
    public init(passphrase: String) throws(Refusal) {
        let start = passphrase.firstIndex { !$0.isWhitespace } ?? passphrase.endIndex
        let end = passphrase.lastIndex { !$0.isWhitespace }.map { passphrase.index(after: $0) } ?? start
        let text = String(passphrase[start..<end])
        guard !text.isEmpty else { throw Refusal(description: "the pairing secret is empty") }
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: Data(text.utf8)), salt: Data("longform speaker pairing".utf8),
                                     info: Data("secret v1".utf8), outputByteCount: 32)
    }

    /// The secret in the environment variable `LONGFORM_SPEAKER_SECRET`, if it is set.
    public static func fromEnvironment() throws(Refusal) -> PairingSecret? {
        guard let value = ProcessInfo.processInfo.environment[environmentVariable] else { return nil }
        return try PairingSecret(passphrase: value)
    }

    /// The environment variable senders and speakers read the secret from.
    public static let environmentVariable = "LONGFORM_SPEAKER_SECRET"
}
