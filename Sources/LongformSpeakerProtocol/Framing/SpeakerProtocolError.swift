/// Why bytes from a peer were refused; the connection is closed, nothing buffered is touched.
public enum SpeakerProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The frame does not start with `LF`.
    case badMagic(UInt8, UInt8)
    /// A protocol version this side does not speak.
    case unsupportedVersion(UInt8)
    /// A payload longer than `SpeakerFrame.maximumPayloadLength`.
    case payloadTooLong(Int)
    /// A known message whose payload is shorter or longer than its fields, or malformed.
    case malformedPayload(type: UInt8, reason: String)
    /// On a paired connection: a sealed frame that does not open (another key, a changed byte, out of order).
    case notAuthentic
    /// On a paired connection: a frame that is not sealed.
    case unsealedFrame(type: UInt8)
    /// A sealed frame on a connection that has not paired.
    case sealedFrameBeforePairing

    /// `"payload of 4294967295 bytes is over the limit of 4194304"`.
    public var description: String {
        switch self {
        case .badMagic(let first, let second): "not a Longform speaker frame (starts with 0x\(String(first, radix: 16)) 0x\(String(second, radix: 16)))"
        case .unsupportedVersion(let version): "protocol version \(version) is not supported (this side speaks \(SpeakerFrame.version))"
        case .payloadTooLong(let length): "payload of \(length) bytes is over the limit"
        case .malformedPayload(let type, let reason): "message 0x\(String(type, radix: 16)): \(reason)"
        case .notAuthentic: "a sealed frame did not authenticate"
        case .unsealedFrame(let type): "message 0x\(String(type, radix: 16)) was not sealed on a paired connection"
        case .sealedFrameBeforePairing: "a sealed frame before pairing"
        }
    }
}
