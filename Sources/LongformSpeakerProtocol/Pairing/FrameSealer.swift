import Crypto

/// Seals messages for one direction of a paired connection: each becomes a `sealed` frame whose
/// payload is the inner type and payload under ChaCha20-Poly1305, the frame's header authenticated
/// with it. The nonce is the count of frames sealed before, so a frame replayed, dropped or
/// reordered fails to open.
public struct FrameSealer: Sendable {
    private let key: SymmetricKey
    private var counter: UInt64 = 0

    /// A sealer for the direction `key` belongs to.
    public init(key: SymmetricKey) { self.key = key }

    /// The message as one sealed frame.
    public mutating func seal(_ message: SpeakerMessage) -> [UInt8] {
        // What is encrypted: the type, then the payload.
        let inner = [message.type] + message.encodedPayload()
        let header = SpeakerFrame.header(type: SpeakerFrame.sealedType, payloadLength: inner.count + SpeakerFrame.sealTagLength)
        // A nonce is never used twice with a key: the counter only grows, and each connection has its own keys.
        let box = try! ChaChaPoly.seal(inner, using: key, nonce: Self.nonce(counter), authenticating: header)
        counter += 1
        return header + box.ciphertext + box.tag
    }

    /// The 12-byte nonce of frame number `counter`.
    static func nonce(_ counter: UInt64) -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 4)
        withUnsafeBytes(of: counter.bigEndian) { bytes.append(contentsOf: $0) }
        return try! ChaChaPoly.Nonce(data: bytes) // 12 bytes: the only way it throws is another length
    }
}
