/// Why a FLAC frame did not decode: what was wrong, and where.
public struct FLACFrameError: Error, Sendable, CustomStringConvertible {
    /// What was wrong, for the log.
    public let reason: String

    /// An error saying `reason`.
    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}

/// Decodes FLAC frames (RFC 9639) of 16-bit samples that each stand alone, as the sender's audio
/// messages carry them: no stream header, the rate and the channels from the `format` message.
/// In Swift, so that a speaker needs no FFmpeg (whose libraries were nearly half of an idle
/// speaker's memory). A frame comes from the network: every read is checked against its end, its
/// header's CRC-8 and its CRC-16 against its bytes, every value against the range it may take,
/// so a corrupt or hostile frame is an error that says what was wrong, never a trap or noise.
public struct FLACFrameDecoder: Sendable {
    /// Frames per second the frames must carry (or leave to the stream, as FLAC allows).
    public let sampleRate: Int
    /// Interleaved channels (1 to 8).
    public let channelCount: Int

    /// Bits per sample of the audio decoded.
    static let bitsPerSample = 16
    /// The rates a header's rate codes 1 to 11 name (0 is the stream's: the `format` message's).
    private static let codedRates = [0, 88_200, 176_400, 192_000, 8_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000, 96_000]
    /// The FIXED predictors' coefficients, by order (0 to 4).
    private static let fixedCoefficients: [[Int64]] = [[], [1], [2, -1], [3, -3, 1], [4, -6, 4, -1]]

    /// A decoder for frames of `channelCount` channels (1 to 8) at `sampleRate`.
    public init(sampleRate: Int, channelCount: Int) throws(FLACFrameError) {
        guard (1...8).contains(channelCount) else { throw FLACFrameError("\(channelCount) channels (FLAC: 1 to 8)") }
        guard sampleRate > 0 else { throw FLACFrameError("a rate of \(sampleRate) Hz") }
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    /// The samples of `frame`, which must hold `frameCount` frames of this decoder's format.
    public func decode(_ frame: [UInt8], frameCount: Int) throws(FLACFrameError) -> [Int16] {
        var samples = [Int16](repeating: 0, count: frameCount * channelCount)
        try samples.withUnsafeMutableBufferPointer { pointer throws(FLACFrameError) in try decode(frame, into: pointer) }
        return samples
    }

    /// Decodes `frame` into `samples`, which it must fill exactly (interleaved, `channelCount` a frame).
    public func decode(_ frame: [UInt8], into samples: UnsafeMutableBufferPointer<Int16>) throws(FLACFrameError) {
        guard samples.count % channelCount == 0 else { throw FLACFrameError("room for \(samples.count) samples, not whole frames of \(channelCount)") }
        let result: Result<Void, FLACFrameError> = frame.withUnsafeBytes { bytes in
            do throws(FLACFrameError) {
                var reader = FLACBitReader(bytes)
                try decode(&reader, into: samples)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// How the channels are stored (the header's channel assignment).
    private enum ChannelAssignment {
        case independent
        case leftSide
        case sideRight
        case midSide

        /// Which channel holds the side, one bit wider than the others.
        var sideChannel: Int? {
            switch self {
            case .independent: nil
            case .leftSide, .midSide: 1
            case .sideRight: 0
            }
        }
    }

    private func decode(_ reader: inout FLACBitReader, into samples: UnsafeMutableBufferPointer<Int16>) throws(FLACFrameError) {
        let expectedFrames = samples.count / channelCount
        let (blockSize, assignment) = try readHeader(&reader, expectedFrames: expectedFrames)
        var channels: [[Int64]] = []
        channels.reserveCapacity(channelCount)
        for channel in 0..<channelCount {
            let bits = Self.bitsPerSample + (assignment.sideChannel == channel ? 1 : 0)
            channels.append(try readSubframe(&reader, blockSize: blockSize, bitsPerSample: bits, channel: channel))
        }
        reader.alignToByte()
        let computed = FLACChecksum.crc16(reader.bytesRead)
        let stored = try reader.read(16)
        guard computed == stored else { throw FLACFrameError("the frame's CRC-16 is \(stored), its bytes give \(computed)") }
        guard reader.remainingBits == 0 else { throw FLACFrameError("\(reader.remainingBits / 8) bytes after the frame's end") }
        try Self.interleave(channels, assignment: assignment, into: samples)
    }

    /// The frame header: its block size (checked against `expectedFrames`) and how its channels are stored.
    private func readHeader(_ reader: inout FLACBitReader, expectedFrames: Int) throws(FLACFrameError) -> (Int, ChannelAssignment) {
        let sync = try reader.read(15)
        guard sync == 0x7FFC else { throw FLACFrameError("no frame sync at the start (\(String(sync, radix: 2)))") }
        _ = try reader.read(1) // fixed or variable block size: each frame stands alone here
        let blockSizeCode = try reader.read(4), rateCode = try reader.read(4)
        let channelCode = try reader.read(4), sizeCode = try reader.read(3)
        guard try reader.read(1) == 0 else { throw FLACFrameError("the header's reserved bit is set") }
        // The frame or sample number, UTF-8-like: not used (the message says where the frame goes).
        let first = try reader.read(8)
        let continuation = first < 0x80 ? 0 : (first < 0xC0 || first == 0xFF) ? -1 : Int((~UInt8(first)).leadingZeroBitCount) - 1
        guard continuation >= 0 else { throw FLACFrameError("a frame number starting with byte \(first)") }
        for _ in 0..<continuation {
            guard try reader.read(8) & 0xC0 == 0x80 else { throw FLACFrameError("a frame number with a bad continuation byte") }
        }
        let blockSize: Int
        switch blockSizeCode {
        case 0: throw FLACFrameError("the reserved block size code 0")
        case 1: blockSize = 192
        case 2...5: blockSize = 576 << (Int(blockSizeCode) - 2)
        case 6: blockSize = Int(try reader.read(8)) + 1
        case 7: blockSize = Int(try reader.read(16)) + 1
        default: blockSize = 256 << (Int(blockSizeCode) - 8)
        }
        let rate: Int
        switch rateCode {
        case 0: rate = sampleRate
        case 12: rate = Int(try reader.read(8)) * 1_000
        case 13: rate = Int(try reader.read(16))
        case 14: rate = Int(try reader.read(16)) * 10
        case 15: throw FLACFrameError("the invalid rate code 15")
        default: rate = Self.codedRates[Int(rateCode)]
        }
        let headerCRC = FLACChecksum.crc8(reader.bytesRead)
        let storedCRC = try reader.read(8)
        guard headerCRC == storedCRC else { throw FLACFrameError("the header's CRC-8 is \(storedCRC), its bytes give \(headerCRC)") }
        guard blockSize == expectedFrames else { throw FLACFrameError("a frame of \(blockSize) frames, \(expectedFrames) expected") }
        guard rate == sampleRate else { throw FLACFrameError("a frame at \(rate) Hz, \(sampleRate) expected") }
        guard sizeCode == 0 || sizeCode == 4 else { throw FLACFrameError("samples of size code \(sizeCode), 16-bit (4) expected") }
        let assignment: ChannelAssignment, channels: Int
        switch channelCode {
        case 0...7: (assignment, channels) = (.independent, Int(channelCode) + 1)
        case 8: (assignment, channels) = (.leftSide, 2)
        case 9: (assignment, channels) = (.sideRight, 2)
        case 10: (assignment, channels) = (.midSide, 2)
        default: throw FLACFrameError("the reserved channel assignment \(channelCode)")
        }
        guard channels == channelCount else { throw FLACFrameError("a frame of \(channels) channels, \(channelCount) expected") }
        return (blockSize, assignment)
    }

    /// One channel's subframe: `blockSize` samples of `bitsPerSample` bits.
    private func readSubframe(_ reader: inout FLACBitReader, blockSize: Int, bitsPerSample: Int, channel: Int) throws(FLACFrameError) -> [Int64] {
        guard try reader.read(1) == 0 else { throw FLACFrameError("channel \(channel)'s subframe padding bit is set") }
        let type = Int(try reader.read(6))
        let wasted = try reader.read(1) == 1 ? reader.readUnary() + 1 : 0
        guard wasted < bitsPerSample else { throw FLACFrameError("channel \(channel) wastes \(wasted) of its \(bitsPerSample) bits") }
        let bits = bitsPerSample - wasted
        var values: [Int64]
        switch type {
        case 0:
            values = [Int64](repeating: try reader.readSigned(bits), count: blockSize)
        case 1:
            values = []
            values.reserveCapacity(blockSize)
            for _ in 0..<blockSize { values.append(try reader.readSigned(bits)) }
        case 8...12:
            values = try readPredicted(&reader, order: type - 8, isLPC: false, blockSize: blockSize, bits: bits, channel: channel)
        case 32...63:
            values = try readPredicted(&reader, order: type - 31, isLPC: true, blockSize: blockSize, bits: bits, channel: channel)
        default:
            throw FLACFrameError("channel \(channel)'s reserved subframe type \(type)")
        }
        if wasted > 0 { for index in values.indices { values[index] <<= Int64(wasted) } }
        return values
    }

    /// A FIXED or an LPC subframe after its type: the warm-up samples, for LPC the coefficients'
    /// precision, their shift and the coefficients, then the residual; and the prediction.
    private func readPredicted(_ reader: inout FLACBitReader, order: Int, isLPC: Bool, blockSize: Int, bits: Int,
                               channel: Int) throws(FLACFrameError) -> [Int64] {
        guard order <= blockSize else { throw FLACFrameError("channel \(channel)'s predictor of order \(order) for \(blockSize) samples") }
        var values = [Int64](repeating: 0, count: blockSize)
        for index in 0..<order { values[index] = try reader.readSigned(bits) }
        var coefficients: [Int64] = []
        var shift: Int64 = 0
        if isLPC {
            let precision = Int(try reader.read(4)) + 1
            guard precision < 16 else { throw FLACFrameError("channel \(channel)'s LPC precision code 15") }
            shift = try reader.readSigned(5)
            guard shift >= 0 else { throw FLACFrameError("channel \(channel)'s LPC shift \(shift)") }
            for _ in 0..<order { coefficients.append(try reader.readSigned(precision)) }
        } else {
            coefficients = Self.fixedCoefficients[order]
        }
        try readResidual(&reader, into: &values, order: order, channel: channel)
        values.withUnsafeMutableBufferPointer { values in
            coefficients.withUnsafeBufferPointer { coefficients in
                // Wrapping arithmetic: a hostile frame's values overflow into nonsense (caught at the
                // end as out of range), never a trap. A valid frame's sums fit: 15-bit coefficients
                // times 17-bit samples, 32 of them.
                // Each order its own loop, unrolled by the compiler over its constant taps.
                switch order {
                case 1: Self.predict(values, coefficients, order: 1, shift: shift)
                case 2: Self.predict(values, coefficients, order: 2, shift: shift)
                case 3: Self.predict(values, coefficients, order: 3, shift: shift)
                case 4: Self.predict(values, coefficients, order: 4, shift: shift)
                case 5: Self.predict(values, coefficients, order: 5, shift: shift)
                case 6: Self.predict(values, coefficients, order: 6, shift: shift)
                case 7: Self.predict(values, coefficients, order: 7, shift: shift)
                case 8: Self.predict(values, coefficients, order: 8, shift: shift)
                case 9: Self.predict(values, coefficients, order: 9, shift: shift)
                case 10: Self.predict(values, coefficients, order: 10, shift: shift)
                case 11: Self.predict(values, coefficients, order: 11, shift: shift)
                case 12: Self.predict(values, coefficients, order: 12, shift: shift)
                default: Self.predict(values, coefficients, order: order, shift: shift)
                }
            }
        }
        return values
    }

    /// `frames` stereo frames, each pair from `pair`, into `samples` as 16-bit.
    @inline(__always)
    private static func interleave(_ frames: Int, into samples: UnsafeMutableBufferPointer<Int16>,
                                   _ pair: (Int) -> (Int64, Int64)) throws(FLACFrameError) {
        for frame in 0..<frames {
            let (left, right) = pair(frame)
            guard let leftSample = Int16(exactly: left) else { throw FLACFrameError("channel 0's sample \(left) at frame \(frame) is not 16-bit") }
            guard let rightSample = Int16(exactly: right) else { throw FLACFrameError("channel 1's sample \(right) at frame \(frame) is not 16-bit") }
            samples[2 * frame] = leftSample
            samples[2 * frame + 1] = rightSample
        }
    }

    /// Adds to each of `values` after the first `order` its prediction from the `order` before it.
    @inline(__always)
    private static func predict(_ values: UnsafeMutableBufferPointer<Int64>, _ coefficients: UnsafeBufferPointer<Int64>, order: Int, shift: Int64) {
        guard let base = values.baseAddress, let taps = coefficients.baseAddress else { return }
        var index = order
        while index < values.count {
            var sum: Int64 = 0
            var tap = 0
            while tap < order { sum = sum &+ taps[tap] &* base[index - 1 - tap]; tap += 1 }
            base[index] = base[index] &+ (sum >> shift)
            index += 1
        }
    }

    /// A residual (partitioned Rice coding) into `values` after the `order` warm-up samples.
    private func readResidual(_ reader: inout FLACBitReader, into values: inout [Int64], order: Int, channel: Int) throws(FLACFrameError) {
        let method = try reader.read(2)
        guard method <= 1 else { throw FLACFrameError("channel \(channel)'s reserved residual coding \(method)") }
        let parameterBits = method == 0 ? 4 : 5, escape = method == 0 ? 15 : 31
        let partitionOrder = Int(try reader.read(4))
        let partitions = 1 << partitionOrder
        let perPartition = values.count >> partitionOrder
        guard perPartition << partitionOrder == values.count, perPartition >= order else {
            throw FLACFrameError("channel \(channel)'s \(partitions) partitions for \(values.count) samples after \(order)")
        }
        try values.withUnsafeMutableBufferPointer { values throws(FLACFrameError) in
            let base = values.baseAddress!
            var index = order
            for partition in 0..<partitions {
                let end = (partition + 1) * perPartition
                let parameter = Int(try reader.read(parameterBits))
                if parameter == escape {
                    let bits = Int(try reader.read(5))
                    while index < end { base[index] = try reader.readSigned(bits); index += 1 }
                } else {
                    try reader.readRice(parameter, into: base + index, count: end - index)
                    index = end
                }
            }
        }
    }

    /// The channels undone from their assignment and interleaved as 16-bit samples.
    private static func interleave(_ channels: [[Int64]], assignment: ChannelAssignment, into samples: UnsafeMutableBufferPointer<Int16>) throws(FLACFrameError) {
        let count = channels.count
        let frames = samples.count / count
        if count == 2, frames <= channels[0].count, frames <= channels[1].count {
            // Stereo: one loop per assignment, each sample checked as the general loop checks it.
            let first = channels[0], second = channels[1]
            switch assignment {
            case .independent: try interleave(frames, into: samples) { (first[$0], second[$0]) }
            case .leftSide: try interleave(frames, into: samples) { (first[$0], first[$0] &- second[$0]) }
            case .sideRight: try interleave(frames, into: samples) { (first[$0] &+ second[$0], second[$0]) }
            case .midSide:
                try interleave(frames, into: samples) {
                    let side = second[$0], mid = first[$0] << 1 | (side & 1)
                    return ((mid &+ side) >> 1, (mid &- side) >> 1)
                }
            }
            return
        }
        for frame in 0..<frames {
            for channel in 0..<count {
                var value: Int64
                switch assignment {
                case .independent: value = channels[channel][frame]
                case .leftSide: value = channel == 0 ? channels[0][frame] : channels[0][frame] &- channels[1][frame]
                case .sideRight: value = channel == 0 ? channels[0][frame] &+ channels[1][frame] : channels[1][frame]
                case .midSide:
                    let side = channels[1][frame], mid = channels[0][frame] << 1 | (side & 1)
                    value = (channel == 0 ? mid &+ side : mid &- side) >> 1
                }
                guard let sample = Int16(exactly: value) else {
                    throw FLACFrameError("channel \(channel)'s sample \(value) at frame \(frame) is not 16-bit")
                }
                samples[frame * count + channel] = sample
            }
        }
    }
}
