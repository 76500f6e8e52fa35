/// What travels on the control ports: the sender's sync packets, the receiver's resend requests
/// and the sender's resent packets.
public enum RAOPControlPacket {
    /// The fixed latency a receiver adds to a sync packet's when its flags are 7 (frames at 44.1 kHz).
    public static let fixedLatencyFrames: UInt32 = 11_025
    /// The latency a sync packet states on top of the fixed one: 2 s in all, what senders send.
    public static let statedLatencyFrames: UInt32 = 77_175

    /// A sync packet (`0x90 0xD4` on the first after a start or a flush, `0x80 0xD4` after, flags
    /// 7): RTP time `heardRTPTime` is heard at `time` on the sender's timeline. The receiver plays
    /// frame F at `time + (F − field₁ + 11,025) / rate`, field₁ being bytes 4–7, so field₁ is the
    /// frame heard plus the fixed latency; bytes 16–19 add the stated latency to it.
    public static func sync(heardRTPTime: UInt32, at time: NTPTimestamp, isFirst: Bool) -> [UInt8] {
        let lessLatency = heardRTPTime &+ fixedLatencyFrames
        var bytes: [UInt8] = [isFirst ? 0x90 : 0x80, 0xD4, 0x00, 0x07]
        bytes.appendBigEndian(lessLatency)
        bytes.appendBigEndian(time.rawValue)
        bytes.appendBigEndian(lessLatency &+ statedLatencyFrames)
        return bytes
    }

    /// A receiver's request to send packets again: the first sequence number and how many.
    public struct ResendRequest: Sendable, Equatable {
        /// The first packet missing.
        public var firstSequenceNumber: UInt16
        /// How many packets from it.
        public var count: UInt16

        /// A request.
        public init(firstSequenceNumber: UInt16, count: UInt16) {
            self.firstSequenceNumber = firstSequenceNumber
            self.count = count
        }

        /// Reads `0x80 0xD5 seq(2) first(2) count(2)`; nil for any other packet.
        public init?(parsing bytes: some Collection<UInt8>) {
            let bytes = Array(bytes)
            guard bytes.count >= 8, bytes[0] & 0xC0 == 0x80, bytes[1] & 0x7F == 0x55 else { return nil }
            self.init(firstSequenceNumber: bytes.bigEndian(at: 4), count: bytes.bigEndian(at: 6))
        }

        /// The request on the wire (for tests of the answering side).
        public func encoded() -> [UInt8] {
            var bytes: [UInt8] = [0x80, 0xD5, 0x00, 0x01]
            bytes.appendBigEndian(firstSequenceNumber)
            bytes.appendBigEndian(count)
            return bytes
        }
    }

    /// An audio packet sent again in answer to a resend request: `0x80 0xD6`, two bytes (the
    /// sequence number again), then the packet as it was first sent.
    public static func resent(_ packet: [UInt8]) -> [UInt8] {
        [0x80, 0xD6] + (packet.count >= 4 ? Array(packet[2..<4]) : [0, 0]) + packet
    }
}
