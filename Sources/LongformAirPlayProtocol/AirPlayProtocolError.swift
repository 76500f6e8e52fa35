/// Why bytes from an AirPlay receiver could not be read: each case names the culprit.
public enum AirPlayProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An RTSP response whose status line or headers are not RTSP.
    case malformedResponse(String)
    /// A response header block or body larger than a receiver has reason to send.
    case responseTooLarge(bytes: Int)
    /// A UDP packet that is not what its port carries.
    case malformedPacket(String)
    /// A header the protocol needs that the receiver did not send, or sent garbled.
    case missingHeader(String)
    /// A binary property list body that is not one, or not one AirPlay sends.
    case malformedPropertyList(String)

    /// What went wrong, for a log line or an error message.
    public var description: String {
        switch self {
        case .malformedResponse(let reason): "malformed RTSP response: \(reason)"
        case .responseTooLarge(let bytes): "an RTSP response of more than \(bytes) bytes"
        case .malformedPacket(let reason): "malformed packet: \(reason)"
        case .missingHeader(let name): "no usable \(name) header in the response"
        case .malformedPropertyList(let reason): "malformed binary property list: \(reason)"
        }
    }
}
