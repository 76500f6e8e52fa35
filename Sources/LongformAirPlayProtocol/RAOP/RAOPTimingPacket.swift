/// RAOP's clock exchange on the sender's timing port: the receiver asks (`0x80 0xD2`, 32 bytes),
/// the sender answers (`0x80 0xD3`) with the request's transmit time echoed (bytes 8–15) and its
/// own receive and transmit times (16–23, 24–31) on its timeline; the receiver computes its offset
/// to the sender's clock from them.
public enum RAOPTimingPacket {
    /// The bytes of a timing packet.
    public static let length = 32

    /// The transmit time of a request, or nil for anything that is not a timing request.
    public static func requestTransmitTime(in bytes: some Collection<UInt8>) -> NTPTimestamp? {
        let bytes = Array(bytes)
        guard bytes.count >= length, bytes[0] & 0xC0 == 0x80, bytes[1] & 0x7F == 0x52 else { return nil }
        return NTPTimestamp(rawValue: bytes.bigEndian(at: 24))
    }

    /// The answer to a request sent at `requestTransmitTime`, received at `receivedAt` and answered at `sentAt`.
    public static func reply(toRequestSentAt requestTransmitTime: NTPTimestamp, receivedAt: NTPTimestamp, sentAt: NTPTimestamp) -> [UInt8] {
        var bytes: [UInt8] = [0x80, 0xD3, 0x00, 0x07, 0, 0, 0, 0]
        bytes.appendBigEndian(requestTransmitTime.rawValue)
        bytes.appendBigEndian(receivedAt.rawValue)
        bytes.appendBigEndian(sentAt.rawValue)
        return bytes
    }

    /// A request as a receiver sends it, transmitted at `sentAt` (for tests of the answering side).
    public static func request(sentAt: NTPTimestamp) -> [UInt8] {
        var bytes: [UInt8] = [0x80, 0xD2, 0x00, 0x07]
        bytes += [UInt8](repeating: 0, count: 20)
        bytes.appendBigEndian(sentAt.rawValue)
        return bytes
    }
}
