import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a paired group's clock datagrams are tagged with: a key derived from the pairing secret.
/// A datagram's last 8 bytes, zero in a group without a secret, are then the first 8 bytes of an
/// HMAC-SHA256 under this key of the bytes before them, so that a speaker takes only its sender's
/// replies and a sender answers a paired speaker only when it knows the same secret.
public struct ClockKey: Sendable, Equatable {
    private let key: SymmetricKey

    /// The clock key of `secret`.
    public init(secret: PairingSecret) {
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: secret.key, salt: Data("longform speaker clock".utf8), info: Data(), outputByteCount: 32)
    }

    /// Bytes of a tag.
    static let tagLength = 8

    /// The tag of `fields` (a datagram's bytes before its tag).
    func tag(of fields: some Collection<UInt8>) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(fields), using: key).prefix(Self.tagLength))
    }

    /// Whether `tag` is the tag of `fields`, compared in constant time (a forger learns nothing
    /// from how long a wrong tag takes to refuse).
    func isTag(_ tag: some Collection<UInt8>, of fields: some Collection<UInt8>) -> Bool {
        let expected = self.tag(of: fields)
        guard tag.count == expected.count else { return false }
        return zip(tag, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
