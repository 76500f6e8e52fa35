/// Reads a FLAC frame's bits, most significant first. Every read is checked against the frame's
/// end (a frame comes from the network): past it, the read throws `FLACFrameError`.
///
/// Holds a pointer to bytes its caller keeps alive for the reader's whole life (one decode).
struct FLACBitReader {
    private let bytes: UnsafeRawBufferPointer
    /// The next bit to read, from the frame's first.
    private(set) var position = 0

    /// A reader at the first bit of `bytes`.
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Bits not read yet.
    var remainingBits: Int { bytes.count * 8 - position }

    /// The 64 bits from the current position, zeros past the frame's end; at least the first 57
    /// are the frame's, where it has that many left.
    @inline(__always)
    private func peek() -> UInt64 {
        let byteIndex = position >> 3
        var word: UInt64
        if byteIndex + 8 <= bytes.count {
            word = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: byteIndex, as: UInt64.self))
        } else {
            word = 0
            for index in byteIndex..<(byteIndex + 8) { word = word << 8 | (index < bytes.count ? UInt64(bytes[index]) : 0) }
        }
        return word << UInt64(position & 7)
    }

    /// The next `count` bits (0 to 32) as an unsigned number.
    @inline(__always)
    mutating func read(_ count: Int) throws(FLACFrameError) -> UInt32 {
        guard count > 0 else { return 0 }
        guard count <= remainingBits else { throw FLACFrameError("the frame ends inside a field of \(count) bits, at bit \(position)") }
        let value = peek() >> UInt64(64 - count)
        position += count
        return UInt32(truncatingIfNeeded: value)
    }

    /// The next `count` bits (0 to 33) as a two's-complement number.
    mutating func readSigned(_ count: Int) throws(FLACFrameError) -> Int64 {
        guard count > 0 else { return 0 }
        // 33 bits (a side channel of 32-bit audio): the high bit first.
        let high = count > 32 ? UInt64(try read(count - 32)) << 32 : 0
        let value = high | UInt64(try read(min(count, 32)))
        let shift = UInt64(64 - count)
        return Int64(bitPattern: value << shift) >> Int64(shift)
    }

    /// The number of 0 bits before the next 1 bit (which is read too).
    mutating func readUnary() throws(FLACFrameError) -> Int {
        var zeros = 0
        while true {
            guard remainingBits > 0 else { throw FLACFrameError("the frame ends inside a unary number, at bit \(position)") }
            let offset = position & 7
            let byte = bytes[position >> 3] << UInt8(offset)
            if byte == 0 {
                zeros += 8 - offset
                position += 8 - offset
                continue
            }
            let leading = byte.leadingZeroBitCount
            zeros += leading
            position += leading + 1
            return zeros
        }
    }

    /// A Rice-coded residual with `parameter` (0 to 30) low bits, zigzag-decoded.
    @inline(__always)
    mutating func readRice(_ parameter: Int) throws(FLACFrameError) -> Int64 {
        // Most residuals fit in the next 57 bits: their quotient's zeros, its 1, and the low bits
        // from one load. A longer one, or one at the frame's end, goes the long way.
        let word = peek()
        let zeros = word.leadingZeroBitCount
        let length = zeros + 1 + parameter
        guard length <= 57, length <= remainingBits, zeros < (1 << 32) >> parameter else { return try readRiceSlowly(parameter) }
        let low = parameter == 0 ? 0 : (word << UInt64(zeros + 1)) >> UInt64(64 - parameter)
        position += length
        return Self.unfolded(UInt64(zeros) << UInt64(parameter) | low)
    }

    /// `readRice` a unary digit at a time, to the frame's end.
    private mutating func readRiceSlowly(_ parameter: Int) throws(FLACFrameError) -> Int64 {
        let quotient = try readUnary()
        // A quotient this long is no 32-bit residual: a corrupt or hostile frame.
        guard quotient < (1 << 32) >> parameter else { throw FLACFrameError("a residual of \(quotient) << \(parameter), at bit \(position)") }
        return Self.unfolded(UInt64(quotient) << UInt64(parameter) | UInt64(try read(parameter)))
    }

    /// A zigzag-coded residual (0, −1, 1, −2, … as 0, 1, 2, 3, …) as the number it codes.
    @inline(__always)
    private static func unfolded(_ folded: UInt64) -> Int64 {
        Int64(bitPattern: folded >> 1) ^ -Int64(bitPattern: folded & 1)
    }

    /// Skips to the next byte boundary (the padding before a frame's CRC-16).
    mutating func alignToByte() {
        position = (position + 7) & ~7
    }

    /// The bytes before the current position, which must be at a byte boundary.
    var bytesRead: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[0..<(position >> 3)]) }
}

/// FLAC's two checksums (RFC 9639): CRC-8 (polynomial 0x07) over a frame's header, CRC-16
/// (polynomial 0x8005) over the whole frame; both start at 0 and are not reflected.
enum FLACChecksum {
    private static let crc8Table: [UInt8] = (0..<256).map { index in
        var crc = UInt8(index)
        for _ in 0..<8 { crc = crc & 0x80 != 0 ? crc << 1 ^ 0x07 : crc << 1 }
        return crc
    }

    private static let crc16Table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? crc << 1 ^ 0x8005 : crc << 1 }
        return crc
    }

    /// CRC-8 of `bytes`.
    static func crc8(_ bytes: UnsafeRawBufferPointer) -> UInt8 {
        bytes.reduce(0) { crc8Table[Int($0 ^ $1)] }
    }

    /// CRC-16 of `bytes`.
    static func crc16(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
        bytes.reduce(0) { $0 << 8 ^ crc16Table[Int(UInt8(truncatingIfNeeded: $0 >> 8) ^ $1)] }
    }
}
