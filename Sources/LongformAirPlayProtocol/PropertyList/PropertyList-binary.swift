/// Apple's binary property list format, `bplist00`: a header, the objects, a table of their
/// offsets and a 32-byte trailer (the offsets' width, the references' width, the object count, the
/// top object, the table's offset). Each object starts with a marker byte whose high nibble is its
/// type and low nibble its size (15: the size follows as an integer object).
extension PropertyList {
    /// The deepest nesting of arrays and dictionaries a binary plist may have when read: far more
    /// than AirPlay's few levels, few enough that reading never exhausts the stack.
    public static let maximumDepth = 64

    /// Reads a binary property list; a malformed one (truncated, a reference out of range, a
    /// container holding itself or referred to twice, an unknown marker, more than `maximumDepth`
    /// levels) is refused
    /// with `AirPlayProtocolError.malformedPropertyList` saying what and where.
    public init(binary bytes: [UInt8]) throws(AirPlayProtocolError) {
        var reader = try BinaryPropertyListReader(bytes)
        self = try reader.readTopObject()
    }

    /// This value as a binary property list (dictionary keys in sorted order, so that a value
    /// always encodes to the same bytes).
    public func binaryEncoded() -> [UInt8] {
        var writer = BinaryPropertyListWriter()
        return writer.encode(self)
    }
}

/// The reading side of `PropertyList(binary:)`: every offset, count and reference is checked
/// against the bytes before it is used, so that hostile input is an error, never a trap.
struct BinaryPropertyListReader {
    private let bytes: [UInt8]
    private let offsets: [Int]
    private let referenceSize: Int
    private let topObject: Int
    /// The containers being read, outermost first: a reference to one of them is a cycle.
    private var path: [Int] = []
    /// The containers read so far. Each is read once: one shared by reference could make a few
    /// bytes unfold into 2^64 values, and no writer shares containers.
    private var containersRead: Set<Int> = []

    init(_ bytes: [UInt8]) throws(AirPlayProtocolError) {
        self.bytes = bytes
        let header = Array("bplist0".utf8)
        guard bytes.count >= header.count + 1 + 32, Array(bytes.prefix(header.count)) == header else {
            throw .malformedPropertyList("not a binary property list (no bplist0x header and trailer in \(bytes.count) bytes)")
        }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        let objectCount = bytes.bigEndian(at: trailer + 8, as: UInt64.self)
        let top = bytes.bigEndian(at: trailer + 16, as: UInt64.self)
        let tableOffset = bytes.bigEndian(at: trailer + 24, as: UInt64.self)
        guard [1, 2, 4, 8].contains(offsetSize), [1, 2, 4, 8].contains(referenceSize) else {
            throw .malformedPropertyList("the trailer gives offsets of \(offsetSize) bytes and references of \(referenceSize); each must be 1, 2, 4 or 8")
        }
        // Each object takes a byte at least, so there are fewer objects than bytes before the table.
        guard objectCount > 0, tableOffset >= 8, tableOffset <= UInt64(trailer), objectCount <= tableOffset - 8,
              objectCount * UInt64(offsetSize) <= UInt64(trailer) - tableOffset
        else {
            throw .malformedPropertyList("the trailer's \(objectCount) objects with their offset table at \(tableOffset) do not fit \(bytes.count) bytes")
        }
        guard top < objectCount else { throw .malformedPropertyList("the top object \(top) is not one of the \(objectCount) objects") }
        topObject = Int(top)
        var offsets: [Int] = []
        offsets.reserveCapacity(Int(objectCount))
        for index in 0..<Int(objectCount) {
            let offset = bytes.unsignedBigEndian(at: Int(tableOffset) + index * offsetSize, size: offsetSize)
            guard offset >= 8, offset < tableOffset else {
                throw .malformedPropertyList("object \(index)'s offset \(offset) is outside the objects (8..<\(tableOffset))")
            }
            offsets.append(Int(offset))
        }
        self.offsets = offsets
    }

    mutating func readTopObject() throws(AirPlayProtocolError) -> PropertyList { try object(topObject) }

    private mutating func object(_ index: Int) throws(AirPlayProtocolError) -> PropertyList {
        let start = offsets[index]
        let marker = bytes[start]
        let kind = marker >> 4, nibble = Int(marker & 0x0F)
        switch kind {
        case 0x0:
            switch marker {
            case 0x08: return .boolean(false)
            case 0x09: return .boolean(true)
            default: throw .malformedPropertyList("object \(index) at \(start): marker 0x\(hex(marker)) (null and fill are not values)")
            }
        case 0x1:
            guard nibble <= 4 else { throw .malformedPropertyList("object \(index) at \(start): an integer of 2^\(nibble) bytes") }
            return .integer(try integer(at: start + 1, size: 1 << nibble, object: index))
        case 0x2:
            guard nibble == 2 || nibble == 3 else { throw .malformedPropertyList("object \(index) at \(start): a real of 2^\(nibble) bytes") }
            let bits = try span(start + 1, count: 1 << nibble, object: index)
            return .real(nibble == 2 ? Double(Float(bitPattern: bytes.bigEndian(at: bits.lowerBound))) : Double(bitPattern: bytes.bigEndian(at: bits.lowerBound)))
        case 0x3:
            guard marker == 0x33 else { throw .malformedPropertyList("object \(index) at \(start): marker 0x\(hex(marker))") }
            let bits = try span(start + 1, count: 8, object: index)
            return .date(secondsSince2001: Double(bitPattern: bytes.bigEndian(at: bits.lowerBound)))
        case 0x4:
            let (count, first) = try length(nibble, at: start, object: index)
            return .data(Array(bytes[try span(first, count: count, object: index)]))
        case 0x5:
            let (count, first) = try length(nibble, at: start, object: index)
            let text = bytes[try span(first, count: count, object: index)]
            guard text.allSatisfy({ $0 < 0x80 }) else { throw .malformedPropertyList("object \(index) at \(start): an ASCII string with a byte over 0x7F") }
            return .string(String(decoding: text, as: UTF8.self))
        case 0x6:
            let (count, first) = try length(nibble, at: start, object: index)
            guard count <= Int.max / 2 else { throw .malformedPropertyList("object \(index) at \(start): a string of \(count) UTF-16 units") }
            let units = try span(first, count: count * 2, object: index)
            var decoded: [UInt16] = []
            decoded.reserveCapacity(count)
            for offset in stride(from: units.lowerBound, to: units.upperBound, by: 2) { decoded.append(bytes.bigEndian(at: offset)) }
            guard let text = String(validating: decoded, as: UTF16.self) else {
                throw .malformedPropertyList("object \(index) at \(start): a UTF-16 string that is not valid UTF-16")
            }
            return .string(text)
        case 0xA, 0xD:
            guard path.count < PropertyList.maximumDepth else {
                throw .malformedPropertyList("object \(index) at \(start): nested more than \(PropertyList.maximumDepth) deep")
            }
            guard !path.contains(index) else { throw .malformedPropertyList("object \(index) at \(start) contains itself") }
            guard containersRead.insert(index).inserted else {
                throw .malformedPropertyList("object \(index) at \(start): a container referred to twice (only strings, numbers, data and dates may be shared)")
            }
            let (count, first) = try length(nibble, at: start, object: index)
            // A count beyond the bytes is refused here, before the multiplication could overflow.
            let referencesPerEntry = kind == 0xD ? 2 : 1
            guard count <= bytes.count / (referencesPerEntry * referenceSize) else {
                throw .malformedPropertyList("object \(index) at \(start): \(count) entries, more than \(bytes.count) bytes hold")
            }
            let references = try span(first, count: count * referencesPerEntry * referenceSize, object: index)
            path.append(index)
            defer { path.removeLast() }
            func reference(_ position: Int) throws(AirPlayProtocolError) -> Int {
                let value = bytes.unsignedBigEndian(at: references.lowerBound + position * referenceSize, size: referenceSize)
                guard value < UInt64(offsets.count) else {
                    throw .malformedPropertyList("object \(index) at \(start) refers to object \(value) of \(offsets.count)")
                }
                return Int(value)
            }
            if kind == 0xA {
                var elements: [PropertyList] = []
                for position in 0..<count { elements.append(try object(try reference(position))) }
                return .array(elements)
            }
            var entries: [String: PropertyList] = [:]
            for position in 0..<count {
                guard case .string(let key) = try object(try reference(position)) else {
                    throw .malformedPropertyList("object \(index) at \(start): key \(position) is not a string")
                }
                entries[key] = try object(try reference(count + position))
            }
            return .dictionary(entries)
        case 0x8:
            throw .malformedPropertyList("object \(index) at \(start): a UID (NSKeyedArchiver's), which AirPlay does not send")
        default:
            throw .malformedPropertyList("object \(index) at \(start): unknown marker 0x\(hex(marker))")
        }
    }

    /// The byte range `first ..< first + count`, if it lies before the trailer.
    private func span(_ first: Int, count: Int, object index: Int) throws(AirPlayProtocolError) -> Range<Int> {
        guard count >= 0, first <= bytes.count - 32, count <= bytes.count - 32 - first else {
            throw .malformedPropertyList("object \(index) at \(offsets[index]) runs past the end (\(count) bytes from \(first))")
        }
        return first..<(first + count)
    }

    /// A signed integer of `size` bytes (1, 2 and 4 are unsigned on the wire; 8 and 16 are two's complement).
    private func integer(at offset: Int, size: Int, object index: Int) throws(AirPlayProtocolError) -> Int128 {
        let range = try span(offset, count: size, object: index)
        switch size {
        case 16: return bytes.bigEndian(at: range.lowerBound, as: Int128.self)
        case 8: return Int128(bytes.bigEndian(at: range.lowerBound, as: Int64.self))
        default: return Int128(bytes.unsignedBigEndian(at: range.lowerBound, size: size))
        }
    }

    /// A container's or a string's count: the marker's nibble, or the integer object after it.
    private func length(_ nibble: Int, at start: Int, object index: Int) throws(AirPlayProtocolError) -> (count: Int, first: Int) {
        guard nibble == 0x0F else { return (nibble, start + 1) }
        let sizeMarker = try span(start + 1, count: 1, object: index)
        let marker = bytes[sizeMarker.lowerBound]
        guard marker >> 4 == 0x1, marker & 0x0F <= 3 else {
            throw .malformedPropertyList("object \(index) at \(start): its length is marker 0x\(hex(marker)), not an integer")
        }
        let size = 1 << Int(marker & 0x0F)
        let value = try integer(at: start + 2, size: size, object: index)
        guard let count = Int(exactly: value), count >= 0 else { throw .malformedPropertyList("object \(index) at \(start): a length of \(value)") }
        return (count, start + 2 + size)
    }

    private func hex(_ byte: UInt8) -> String { String(byte, radix: 16, uppercase: true) }
}

/// The writing side of `binaryEncoded()`: objects depth first, each referred to by its index.
struct BinaryPropertyListWriter {
    private var objects: [[UInt8]] = []

    mutating func encode(_ value: PropertyList) -> [UInt8] {
        objects = []
        // Containers refer to objects by index in a width fixed before any is written: the count of
        // objects decides it, so count them first.
        let referenceSize = Self.width(for: UInt64(Self.objectCount(value)))
        _ = append(value, referenceSize: referenceSize)
        var output = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(output.count)
            output += object
        }
        let tableOffset = output.count
        let offsetSize = Self.width(for: UInt64(tableOffset))
        for offset in offsets { output.appendBigEndian(UInt64(offset), size: offsetSize) }
        output += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        output.appendBigEndian(UInt64(objects.count))
        output.appendBigEndian(UInt64(0))
        output.appendBigEndian(UInt64(tableOffset))
        return output
    }

    /// How many objects `value` writes: itself, and each element, key and value within it.
    private static func objectCount(_ value: PropertyList) -> Int {
        switch value {
        case .array(let elements): 1 + elements.reduce(0) { $0 + objectCount($1) }
        case .dictionary(let entries): 1 + entries.count + entries.values.reduce(0) { $0 + objectCount($1) }
        default: 1
        }
    }

    /// The fewest of 1, 2, 4 or 8 bytes that hold `value`.
    private static func width(for value: UInt64) -> Int {
        value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
    }

    /// Writes `value` (and what it holds) and returns its index.
    private mutating func append(_ value: PropertyList, referenceSize: Int) -> Int {
        let index = objects.count
        objects.append([])
        var bytes: [UInt8] = []
        switch value {
        case .boolean(let flag): bytes = [flag ? 0x09 : 0x08]
        case .integer(let number): bytes = Self.integer(number)
        case .real(let number):
            bytes = [0x23]
            bytes.appendBigEndian(number.bitPattern)
        case .date(let seconds):
            bytes = [0x33]
            bytes.appendBigEndian(seconds.bitPattern)
        case .data(let data): bytes = Self.marker(0x4, count: data.count) + data
        case .string(let text):
            if text.utf8.allSatisfy({ $0 < 0x80 }) {
                bytes = Self.marker(0x5, count: text.utf8.count) + Array(text.utf8)
            } else {
                let units = Array(text.utf16)
                bytes = Self.marker(0x6, count: units.count)
                for unit in units { bytes.appendBigEndian(unit) }
            }
        case .array(let elements):
            let references = elements.map { append($0, referenceSize: referenceSize) }
            bytes = Self.marker(0xA, count: elements.count)
            for reference in references { bytes.appendBigEndian(UInt64(reference), size: referenceSize) }
        case .dictionary(let entries):
            let keys = entries.keys.sorted()
            let keyReferences = keys.map { append(.string($0), referenceSize: referenceSize) }
            let valueReferences = keys.map { append(entries[$0]!, referenceSize: referenceSize) }
            bytes = Self.marker(0xD, count: keys.count)
            for reference in keyReferences + valueReferences { bytes.appendBigEndian(UInt64(reference), size: referenceSize) }
        }
        objects[index] = bytes
        return index
    }

    /// An integer object in the fewest bytes: 1, 2 or 4 (unsigned), 8 (signed) or 16 (beyond Int64).
    private static func integer(_ value: Int128) -> [UInt8] {
        var bytes: [UInt8]
        if value >= 0 && value <= 0xFF {
            bytes = [0x10, UInt8(value)]
        } else if value >= 0 && value <= 0xFFFF {
            bytes = [0x11]
            bytes.appendBigEndian(UInt16(value))
        } else if value >= 0 && value <= 0xFFFF_FFFF {
            bytes = [0x12]
            bytes.appendBigEndian(UInt32(value))
        } else if let signed = Int64(exactly: value) {
            bytes = [0x13]
            bytes.appendBigEndian(signed)
        } else {
            bytes = [0x14]
            bytes.appendBigEndian(value)
        }
        return bytes
    }

    /// A marker of `kind` for `count` elements, bytes or units: in its nibble, or after it.
    private static func marker(_ kind: UInt8, count: Int) -> [UInt8] {
        if count < 0x0F { return [kind << 4 | UInt8(count)] }
        return [kind << 4 | 0x0F] + integer(Int128(count))
    }
}

extension Array where Element == UInt8 {
    /// Appends the low `size` bytes of `value`, big-endian.
    mutating func appendBigEndian(_ value: UInt64, size: Int) {
        for shift in stride(from: (size - 1) * 8, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// The unsigned big-endian integer of `size` bytes (at most 8) at `offset` (the caller checked the length).
    func unsignedBigEndian(at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for byte in self[offset..<(offset + size)] { value = value << 8 | UInt64(byte) }
        return value
    }
}
