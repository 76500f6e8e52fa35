/// Cuts a byte stream into messages, as bytes arrive in pieces of any size. A value type with no
/// I/O: the connection feeds it and acts on what it returns, so it is tested without sockets.
/// After an error the stream cannot be trusted: the caller closes the connection.
public struct SpeakerFrameDecoder: Sendable {
    /// What the next complete frame was.
    public enum Frame: Sendable, Equatable {
        /// A message this version knows.
        case message(SpeakerMessage)
        /// A type this version does not know, skipped (the payload's length was within the limit).
        case unknown(type: UInt8, length: Int)
    }

    private var buffer: [UInt8] = []
    private var start = 0
    /// Frames with longer payloads are refused; a speaker raises it once the sender has said hello.
    public var maximumPayloadLength: Int
    /// Once a connection has paired: every later frame must be sealed, and opens with this.
    public var opener: FrameOpener?

    /// A decoder with nothing buffered, taking payloads of up to `maximumPayloadLength` bytes.
    public init(maximumPayloadLength: Int = SpeakerFrame.maximumPayloadLength) {
        self.maximumPayloadLength = min(maximumPayloadLength, SpeakerFrame.maximumPayloadLength)
    }

    /// The bytes received and not yet made into a frame.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        // Drop what was consumed before growing: the buffer holds at most one frame and a piece.
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, or nil until more bytes arrive. The header is checked as soon as
    /// it is complete, so that a bad or absurdly long frame is refused before its payload is awaited.
    public mutating func nextFrame() throws(SpeakerProtocolError) -> Frame? {
        guard bufferedByteCount >= 2 else { return nil }
        guard buffer[start] == SpeakerFrame.magic.0, buffer[start + 1] == SpeakerFrame.magic.1 else {
            throw .badMagic(buffer[start], buffer[start + 1])
        }
        guard bufferedByteCount >= SpeakerFrame.headerLength else { return nil }
        let version = buffer[start + 2]
        guard version == SpeakerFrame.version else { throw .unsupportedVersion(version) }
        let type = buffer[start + 3]
        let length = buffer[(start + 4)..<(start + 8)].reduce(0) { $0 << 8 | Int($1) }
        guard length <= maximumPayloadLength else { throw .payloadTooLong(length) }
        guard bufferedByteCount >= SpeakerFrame.headerLength + length else { return nil }
        let payloadStart = start + SpeakerFrame.headerLength
        let payload = buffer[payloadStart..<(payloadStart + length)]
        let header = buffer[start..<payloadStart]
        start = payloadStart + length
        let (messageType, messagePayload): (UInt8, ArraySlice<UInt8>)
        if type == SpeakerFrame.sealedType {
            guard var opener else { throw .sealedFrameBeforePairing }
            let inner = try opener.open(header: header, payload: payload)
            self.opener = opener
            (messageType, messagePayload) = (inner.type, inner.payload[...])
        } else {
            // A refusal may come unsealed (a speaker that did not accept the proof has no keys); it
            // can only end the connection, which a forged TCP reset could do as well.
            guard opener == nil || type == SpeakerMessage.errorType else { throw .unsealedFrame(type: type) }
            (messageType, messagePayload) = (type, payload)
        }
        guard let message = try SpeakerMessage.decode(type: messageType, payload: messagePayload) else {
            return .unknown(type: messageType, length: messagePayload.count)
        }
        return .message(message)
    }
}
