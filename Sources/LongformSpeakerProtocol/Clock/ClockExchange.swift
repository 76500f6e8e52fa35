/// The clock exchange's datagrams (UDP): a speaker's request and the sender's reply, NTP-style.
public enum ClockExchange {
    // How often a speaker asks: `ClockRequestSchedule`.

    /// A speaker's request: its sequence number and its clock when it was sent.
    public struct Request: Sendable, Equatable {
        /// Matches the reply to the request.
        public var sequence: UInt32
        /// The speaker's clock when sent (ns).
        public var t1: UInt64

        /// A request.
        public init(sequence: UInt32, t1: UInt64) {
            self.sequence = sequence
            self.t1 = t1
        }
    }

    /// The sender's reply: the request's fields, and its clock when the request came and the reply left.
    public struct Reply: Sendable, Equatable {
        /// The request's sequence number.
        public var sequence: UInt32
        /// The request's t1, copied.
        public var t1: UInt64
        /// The sender's clock when the request arrived (ns).
        public var t2: UInt64
        /// The sender's clock when the reply left (ns).
        public var t3: UInt64

        /// A reply.
        public init(sequence: UInt32, t1: UInt64, t2: UInt64, t3: UInt64) {
            self.sequence = sequence
            self.t1 = t1
            self.t2 = t2
            self.t3 = t3
        }
    }

    static let requestLength = 24
    static let replyLength = 40

    /// The request's 24 bytes: its last 8 the tag under `key`, or zero without one.
    public static func encode(_ request: Request, key: ClockKey? = nil) -> [UInt8] {
        var writer = header(kind: 1, sequence: request.sequence)
        writer.append(request.t1)
        return tagged(writer.bytes, key: key)
    }

    /// The reply's 40 bytes: its last 8 the tag under `key`, or zero without one.
    public static func encode(_ reply: Reply, key: ClockKey? = nil) -> [UInt8] {
        var writer = header(kind: 2, sequence: reply.sequence)
        writer.append(reply.t1)
        writer.append(reply.t2)
        writer.append(reply.t3)
        return tagged(writer.bytes, key: key)
    }

    /// A datagram as a request, and the key among `keys` its tag is made with (nil: it has none,
    /// a speaker without a secret); nil for anything else, a tag no key made included.
    public static func decodeRequest(_ datagram: some Collection<UInt8>, keys: [ClockKey]) -> (request: Request, key: ClockKey?)? {
        let bytes = Array(datagram)
        guard let request = decodeRequest(bytes) else { return nil }
        let fields = bytes.prefix(requestLength - ClockKey.tagLength), tag = bytes.suffix(ClockKey.tagLength)
        if tag.allSatisfy({ $0 == 0 }) { return (request, nil) }
        guard let key = keys.first(where: { $0.isTag(tag, of: fields) }) else { return nil }
        return (request, key)
    }

    /// A datagram as a reply whose tag is `key`'s (any tag without a key); nil for anything else.
    public static func decodeReply(_ datagram: some Collection<UInt8>, key: ClockKey?) -> Reply? {
        let bytes = Array(datagram)
        guard let reply = decodeReply(bytes), isReply(bytes, taggedWith: key) else { return nil }
        return reply
    }

    /// Whether reply `datagram` (one `decodeReply` takes) carries `key`'s tag; true without a key.
    public static func isReply(_ datagram: [UInt8], taggedWith key: ClockKey?) -> Bool {
        guard let key else { return true }
        return datagram.count == replyLength && key.isTag(datagram.suffix(ClockKey.tagLength), of: datagram.prefix(replyLength - ClockKey.tagLength))
    }

    /// `fields` and their tag under `key`, or 8 zero bytes.
    private static func tagged(_ fields: [UInt8], key: ClockKey?) -> [UInt8] {
        fields + (key?.tag(of: fields) ?? [UInt8](repeating: 0, count: ClockKey.tagLength))
    }

    /// A datagram as a request, its tag not checked; nil for anything else (a datagram is dropped, not answered).
    public static func decodeRequest(_ datagram: some Collection<UInt8>) -> Request? {
        guard var reader = reader(datagram, kind: 1, length: requestLength) else { return nil }
        guard let sequence = try? reader.read(UInt32.self), let t1 = try? reader.read(UInt64.self) else { return nil }
        return Request(sequence: sequence, t1: t1)
    }

    /// A datagram as a reply, its tag not checked; nil for anything else.
    public static func decodeReply(_ datagram: some Collection<UInt8>) -> Reply? {
        guard var reader = reader(datagram, kind: 2, length: replyLength) else { return nil }
        guard let sequence = try? reader.read(UInt32.self), let t1 = try? reader.read(UInt64.self),
              let t2 = try? reader.read(UInt64.self), let t3 = try? reader.read(UInt64.self) else { return nil }
        return Reply(sequence: sequence, t1: t1, t2: t2, t3: t3)
    }

    private static func header(kind: UInt8, sequence: UInt32) -> ByteWriter {
        var writer = ByteWriter()
        writer.append(UInt8(0x4C)) // "L"
        writer.append(UInt8(0x54)) // "T"
        writer.append(SpeakerFrame.version)
        writer.append(kind)
        writer.append(sequence)
        return writer
    }

    private static func reader(_ datagram: some Collection<UInt8>, kind: UInt8, length: Int) -> ByteReader? {
        let bytes = Array(datagram)
        guard bytes.count == length, bytes[0] == 0x4C, bytes[1] == 0x54, bytes[2] == SpeakerFrame.version, bytes[3] == kind else { return nil }
        return ByteReader(bytes[4...], type: kind)
    }
}
