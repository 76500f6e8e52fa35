/// An RTP audio packet as RAOP sends it over UDP: a 12-byte header (version 2, payload type 96,
/// the marker on the first packet after a start or a flush), then one ALAC frame.
public struct RTPAudioPacket: Sendable, Equatable {
    /// The packet's sequence number (wraps at 2^16).
    public var sequenceNumber: UInt16
    /// The RTP time of its first frame (wraps at 2^32).
    public var timestamp: UInt32
    /// The stream's source identifier.
    public var synchronizationSource: UInt32
    /// Whether it starts the stream (after a start or a flush).
    public var isMarked: Bool
    /// The ALAC frame.
    public var payload: [UInt8]

    /// A packet.
    public init(sequenceNumber: UInt16, timestamp: UInt32, synchronizationSource: UInt32, isMarked: Bool, payload: [UInt8]) {
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.synchronizationSource = synchronizationSource
        self.isMarked = isMarked
        self.payload = payload
    }

    /// The packet on the wire.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = [0x80, isMarked ? 0xE0 : 0x60]
        bytes.appendBigEndian(sequenceNumber)
        bytes.appendBigEndian(timestamp)
        bytes.appendBigEndian(synchronizationSource)
        return bytes + payload
    }

    /// Reads a packet (a resent one's inner packet, or a test's capture).
    public init(parsing bytes: some Collection<UInt8>) throws(AirPlayProtocolError) {
        let bytes = Array(bytes)
        guard bytes.count >= 12, bytes[0] & 0xC0 == 0x80, bytes[1] & 0x7F == 96 else {
            throw .malformedPacket("not an RTP audio packet (\(bytes.count) bytes)")
        }
        self.init(sequenceNumber: bytes.bigEndian(at: 2), timestamp: bytes.bigEndian(at: 4), synchronizationSource: bytes.bigEndian(at: 8),
                  isMarked: bytes[1] & 0x80 != 0, payload: Array(bytes[12...]))
    }
}

extension Array where Element == UInt8 {
    /// Appends `value` big-endian.
    mutating func appendBigEndian<Integer: FixedWidthInteger>(_ value: Integer) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    /// The big-endian integer at `offset` (the caller checked the length).
    func bigEndian<Integer: FixedWidthInteger>(at offset: Int, as _: Integer.Type = Integer.self) -> Integer {
        var value = Integer.zero
        for byte in self[offset..<(offset + MemoryLayout<Integer>.size)] { value = value << 8 | Integer(byte) }
        return value
    }
}
