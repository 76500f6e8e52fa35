/// Appends big-endian fields to a byte array.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    mutating func append<Integer: FixedWidthInteger>(_ value: Integer) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ value: Double) { append(value.bitPattern) }
    mutating func append(_ value: Float) { append(value.bitPattern) }

    /// A UTF-8 string with a 2-byte length (cut at 65,535 bytes, on a character boundary).
    mutating func append(_ string: String) {
        var utf8 = Array(string.utf8)
        if utf8.count > Int(UInt16.max) {
            utf8 = Array(String(decoding: utf8.prefix(Int(UInt16.max)), as: UTF8.self).utf8.prefix(Int(UInt16.max)))
            while String(validating: utf8, as: UTF8.self) == nil { utf8.removeLast() }
        }
        append(UInt16(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    mutating func append(bytes other: some Sequence<UInt8>) { bytes.append(contentsOf: other) }
}

/// Reads big-endian fields from a payload; every read checks the length first.
struct ByteReader {
    private let bytes: ArraySlice<UInt8>
    private var position: Int
    private let type: UInt8

    init(_ bytes: ArraySlice<UInt8>, type: UInt8) {
        self.bytes = bytes
        position = bytes.startIndex
        self.type = type
    }

    var remainingCount: Int { bytes.endIndex - position }

    mutating func read<Integer: FixedWidthInteger>(_: Integer.Type = Integer.self) throws(SpeakerProtocolError) -> Integer {
        let size = MemoryLayout<Integer>.size
        guard remainingCount >= size else { throw .malformedPayload(type: type, reason: "ends inside a field") }
        var value = Integer.zero
        for byte in bytes[position..<(position + size)] { value = value << 8 | Integer(byte) }
        position += size
        return value
    }

    mutating func readDouble() throws(SpeakerProtocolError) -> Double { Double(bitPattern: try read(UInt64.self)) }
    mutating func readFloat() throws(SpeakerProtocolError) -> Float { Float(bitPattern: try read(UInt32.self)) }

    mutating func readString() throws(SpeakerProtocolError) -> String {
        let length = Int(try read(UInt16.self))
        let raw = try readBytes(length)
        guard let string = String(validating: raw, as: UTF8.self) else { throw .malformedPayload(type: type, reason: "a string is not UTF-8") }
        return string
    }

    mutating func readBytes(_ count: Int) throws(SpeakerProtocolError) -> ArraySlice<UInt8> {
        guard count >= 0, remainingCount >= count else { throw .malformedPayload(type: type, reason: "ends inside a field") }
        defer { position += count }
        return bytes[position..<(position + count)]
    }

    mutating func readRest() -> ArraySlice<UInt8> {
        defer { position = bytes.endIndex }
        return bytes[position...]
    }

    /// Throws if bytes are left over: a known message must be exactly its fields.
    func finish() throws(SpeakerProtocolError) {
        guard remainingCount == 0 else { throw .malformedPayload(type: type, reason: "\(remainingCount) bytes after the last field") }
    }
}
