import Crypto

/// Opens the sealed frames of one direction of a paired connection, in order.
public struct FrameOpener: Sendable {
    private let key: SymmetricKey
    private var counter: UInt64 = 0

    /// An opener for the direction `key` belongs to.
    public init(key: SymmetricKey) { self.key = key }

    /// The inner type and payload of a sealed frame with `header`; throws when it does not
    /// authenticate (another key, a changed byte, a frame out of order).
    mutating func open(header: ArraySlice<UInt8>, payload: ArraySlice<UInt8>) throws(SpeakerProtocolError) -> (type: UInt8, payload: [UInt8]) {
        guard payload.count > SpeakerFrame.sealTagLength else { throw .notAuthentic }
        let tagStart = payload.endIndex - SpeakerFrame.sealTagLength
        do {
            let box = try ChaChaPoly.SealedBox(nonce: FrameSealer.nonce(counter), ciphertext: payload[..<tagStart], tag: payload[tagStart...])
            let inner = try ChaChaPoly.open(box, using: key, authenticating: header)
            counter += 1
            return (inner[inner.startIndex], Array(inner.dropFirst()))
        } catch {
            throw .notAuthentic
        }
    }
}
