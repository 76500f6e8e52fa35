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

    /// `count` Rice-coded residuals with `parameter` (0 to 30) low bits into `destination`: one
    /// partition. The bits ahead are kept in a register, refilled from the frame while eight
    /// bytes are left to load, so that a residual costs a count of leading zeros and two shifts
    /// rather than a load and its checks (a partition is most of a frame: `readRice` alone was
    /// half of its decoding); one that does not fit, or one near the frame's end, goes through
    /// `readRice`.
    mutating func readRice(_ parameter: Int, into destination: UnsafeMutablePointer<Int64>, count: Int) throws(FLACFrameError) {
        guard count > 0 else { return }
        guard let base = bytes.baseAddress, parameter > 0 else {
            for index in 0..<count { destination[index] = try readRice(parameter) }
            return
        }
        let byteCount = bytes.count, lowShift = UInt64(64 - parameter), longest = (1 << 32) >> parameter
        // `cache` holds the frame's bits from `position` on, left-aligned; `cached` of them are valid.
        var position = self.position, index = 0
        var cache: UInt64 = 0, cached = 0
        while index < count {
            let zeros = cache.leadingZeroBitCount, length = zeros &+ 1 &+ parameter
            if length < cached && zeros < longest {
                // Within the valid bits (`zeros` then counts no bit past them), short of all 64, and
                // a quotient that a 32-bit residual can have (else `readRice` names the culprit).
                let low = (cache &<< UInt64(zeros &+ 1)) &>> lowShift
                destination[index] = Self.unfolded(UInt64(zeros) &<< UInt64(parameter) | low)
                cache = cache &<< UInt64(length)
                cached &-= length
                position &+= length
                index &+= 1
                continue
            }
            let byteIndex = position &>> 3
            if cached < 57, byteIndex &+ 8 <= byteCount {
                // Refill: at least 57 valid bits from here.
                let shift = position & 7
                cache = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: byteIndex, as: UInt64.self)) &<< UInt64(shift)
                cached = 64 &- shift
                continue
            }
            // A residual longer than a refill holds, or the frame's last bytes: checked, a field at a time.
            self.position = position
            destination[index] = try readRice(parameter)
            position = self.position
            index &+= 1
            cache = 0
            cached = 0
        }
        self.position = position
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

    /// CRC-16's tables for eight bytes at a time: row k (of 256) is a byte's CRC followed by k
    /// zero bytes, so that eight bytes' CRCs fold into one without a chain through each byte
    /// (a byte at a time, the checksum was a quarter of a frame's decoding).
    private static let crc16Tables: [UInt16] = {
        var rows = [[UInt16]]()
        rows.append((0..<256).map { index in
            var crc = UInt16(index) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? crc << 1 ^ 0x8005 : crc << 1 }
            return crc
        })
        for _ in 1..<8 {
            let previous = rows[rows.count - 1]
            rows.append(previous.map { $0 << 8 ^ rows[0][Int($0 >> 8)] })
        }
        return rows.flatMap { $0 }
    }()

    /// CRC-8 of `bytes`.
    static func crc8(_ bytes: UnsafeRawBufferPointer) -> UInt8 {
        crc8Table.withUnsafeBufferPointer { table in bytes.reduce(0) { table[Int($0 ^ $1)] } }
    }

    /// CRC-16 of `bytes`: eight bytes a step (the CRC so far folded into the first two), then
    /// the last few one at a time.
    static func crc16(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
        crc16Tables.withUnsafeBufferPointer { tables in
            let t = tables.baseAddress!
            @inline(__always) func row(_ k: Int, _ byte: UInt8) -> UInt16 { t[k &* 256 &+ Int(byte)] }
            var crc: UInt16 = 0, index = 0
            while index &+ 8 <= bytes.count {
                let b0 = bytes[index] ^ UInt8(truncatingIfNeeded: crc &>> 8), b1 = bytes[index &+ 1] ^ UInt8(truncatingIfNeeded: crc)
                crc = row(7, b0) ^ row(6, b1) ^ row(5, bytes[index &+ 2]) ^ row(4, bytes[index &+ 3])
                    ^ row(3, bytes[index &+ 4]) ^ row(2, bytes[index &+ 5]) ^ row(1, bytes[index &+ 6]) ^ row(0, bytes[index &+ 7])
                index &+= 8
            }
            while index < bytes.count {
                crc = crc &<< 8 ^ row(0, UInt8(truncatingIfNeeded: crc &>> 8) ^ bytes[index])
                index &+= 1
            }
            return crc
        }
    }
}
