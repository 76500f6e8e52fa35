import Foundation

/// A WAV file's samples, read back for comparison: the tests' ear.
public struct WAVFileReader {
    /// Frames per second.
    public var sampleRate: Int
    /// Channels per frame.
    public var channelCount: Int
    /// 1 for PCM, 3 for IEEE float.
    public var formatTag: Int
    /// Bits per sample.
    public var bitsPerSample: Int
    /// Interleaved samples scaled to [-1, 1).
    public var samples: [Float]
    /// Interleaved samples as integers (for PCM files), for bit-exact comparison.
    public var integerSamples: [Int32]

    /// Frames in the file.
    public var frameCount: Int { samples.count / channelCount }

    /// Reads `path`; throws on anything that is not a RIFF/WAVE file of PCM or float samples.
    public init(path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        func u32(_ offset: Int) -> Int { Int(data[offset]) | Int(data[offset + 1]) << 8 | Int(data[offset + 2]) << 16 | Int(data[offset + 3]) << 24 }
        func u16(_ offset: Int) -> Int { Int(data[offset]) | Int(data[offset + 1]) << 8 }
        guard data.count >= 44, String(decoding: data[0..<4], as: UTF8.self) == "RIFF", String(decoding: data[8..<12], as: UTF8.self) == "WAVE" else {
            throw ExternalTool.Failure(description: "\(path) is not a WAV file")
        }
        var offset = 12
        var format: (tag: Int, channels: Int, rate: Int, bits: Int)?
        var body: Range<Int>?
        while offset + 8 <= data.count {
            let id = String(decoding: data[offset..<(offset + 4)], as: UTF8.self)
            var size = u32(offset + 4)
            if id == "fmt " {
                var tag = u16(offset + 8)
                if tag == 0xFFFE { tag = u16(offset + 8 + 24) } // WAVE_FORMAT_EXTENSIBLE: the sub-format's tag
                format = (tag, u16(offset + 10), u32(offset + 12), u16(offset + 22))
            } else if id == "data" {
                if size == 0 || offset + 8 + size > data.count { size = data.count - offset - 8 }
                body = (offset + 8)..<(offset + 8 + size)
                break
            }
            offset += 8 + size + (size & 1)
        }
        guard let format, let body else { throw ExternalTool.Failure(description: "\(path): no fmt or data chunk") }
        sampleRate = format.rate
        channelCount = format.channels
        formatTag = format.tag
        bitsPerSample = format.bits
        let bytes = format.bits / 8
        let count = body.count / bytes
        var floats = [Float](repeating: 0, count: count)
        var integers = [Int32](repeating: 0, count: count)
        data.withUnsafeBytes { raw in
            let base = raw.baseAddress!.advanced(by: body.lowerBound)
            for index in 0..<count {
                let pointer = base.advanced(by: index * bytes)
                switch (format.tag, format.bits) {
                case (3, 32):
                    floats[index] = pointer.loadUnaligned(as: Float.self)
                case (_, 16):
                    let value = Int32(pointer.loadUnaligned(as: Int16.self))
                    integers[index] = value
                    floats[index] = Float(value) / 32768
                case (_, 24):
                    let b0 = Int32(pointer.load(fromByteOffset: 0, as: UInt8.self))
                    let b1 = Int32(pointer.load(fromByteOffset: 1, as: UInt8.self))
                    let b2 = Int32(Int8(bitPattern: pointer.load(fromByteOffset: 2, as: UInt8.self)))
                    let value = b0 | b1 << 8 | b2 << 16
                    integers[index] = value
                    floats[index] = Float(value) / 8_388_608
                case (_, 32):
                    let value = pointer.loadUnaligned(as: Int32.self)
                    integers[index] = value
                    floats[index] = Float(Double(value) / 2_147_483_648)
                default:
                    break
                }
            }
        }
        samples = floats
        integerSamples = integers
    }
}
