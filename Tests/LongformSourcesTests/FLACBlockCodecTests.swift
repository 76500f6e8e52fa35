import Foundation
import LongformSources
import LongformTestSupport
import Testing

/// FLAC blocks as a speaker would hold them: each decodes alone, in any order, to exactly the
/// frames encoded, and a broken one is named without spoiling the next.
@Suite struct FLACBlockCodecTests {
    /// sox's two sweeps, 16-bit stereo, as interleaved samples.
    static func referenceSamples(seconds: Double) throws -> [Int16] {
        let path = try TestAudio.reference("flac-blocks", seconds: seconds)
        return try WAVFileReader(path: path).integerSamples.map { Int16($0) }
    }

    /// Splits `samples` into blocks of `sizes` frames in turn, and encodes each.
    static func blocks(of samples: [Int16], sizes: [Int], encoder: FLACBlockEncoder) throws -> [(range: Range<Int>, bytes: [UInt8])] {
        var blocks: [(Range<Int>, [UInt8])] = []
        var start = 0, turn = 0
        while start < samples.count {
            let end = min(samples.count, start + sizes[turn % sizes.count] * 2)
            blocks.append((start..<end, try encoder.encode(Array(samples[start..<end]))))
            start = end
            turn += 1
        }
        return blocks
    }

    @Test func blocksDecodeAloneInAnyOrderToExactlyWhatWasEncoded() throws {
        let samples = try Self.referenceSamples(seconds: 3)
        let encoder = try FLACBlockEncoder(sampleRate: 44_100, channelCount: 2)
        // Full blocks, with short ones between them as a flush or an edit makes (down to one frame).
        let blocks = try Self.blocks(of: samples, sizes: [4_096, 4_096, 1, 4_096, 15, 1_000, 4_096, 4_095], encoder: encoder)
        let decoder = try FLACBlockDecoder(sampleRate: 44_100, channelCount: 2)
        var decoded = [Int16](repeating: -1, count: samples.count)
        // Last first, then every other: nothing depends on the block before.
        let order = Array(blocks.indices.reversed().filter { $0 % 2 == 0 }) + blocks.indices.filter { $0 % 2 == 1 }
        for index in order {
            let (range, bytes) = blocks[index]
            decoded.replaceSubrange(range, with: try decoder.decode(bytes, frameCount: range.count / 2))
        }
        let firstDifference = zip(decoded, samples).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(firstDifference == nil, "sample \(firstDifference ?? -1) differs (frame \((firstDifference ?? 0) / 2))")
        let bytes = blocks.reduce(0) { $0 + $1.bytes.count }
        #expect(Double(bytes) < 0.6 * Double(samples.count * 2), "\(bytes) bytes of FLAC for \(samples.count * 2) of PCM")
    }

    @Test func aBrokenBlockIsNamedAndTheNextDecodesAsBefore() throws {
        let samples = try Self.referenceSamples(seconds: 3)
        let encoder = try FLACBlockEncoder(sampleRate: 44_100, channelCount: 2)
        let first = try encoder.encode(Array(samples[0..<8_192]))
        let second = try encoder.encode(Array(samples[8_192..<16_384]))
        let decoder = try FLACBlockDecoder(sampleRate: 44_100, channelCount: 2)
        var cut = first
        cut.removeLast(first.count / 2)
        // A byte flipped anywhere (the header, the subframes, the checksum): FLAC's CRC-16 catches
        // every one, so none decodes to wrong samples.
        let flipped = stride(from: 0, to: first.count, by: 37).map { position in
            var block = first
            block[position] ^= 0x5A
            return ("a byte flipped at \(position)", block, 4_096)
        }
        for (name, block, frames) in [("cut short", cut, 4_096), ("the wrong length", first, 4_000),
                                      ("not FLAC", [UInt8](repeating: 0x55, count: 300), 4_096), ("empty", [], 4_096)] + flipped {
            #expect(throws: FLACCodecError.self, "\(name)") { try decoder.decode(block, frameCount: frames) }
            #expect(try decoder.decode(second, frameCount: 4_096) == Array(samples[8_192..<16_384]), "the block after one \(name)")
        }
        do {
            _ = try decoder.decode(first, frameCount: 4_000)
        } catch {
            #expect("\(error)".contains("4096 frames, 4000 expected"), "\(error)")
        }
    }

    @Test func whatABlockCannotHoldIsRefusedByName() throws {
        let encoder = try FLACBlockEncoder(sampleRate: 44_100, channelCount: 2, blockFrameCount: 1_024)
        #expect(throws: FLACCodecError.invalidBlock("3 samples are not whole frames of 2 channels")) { try encoder.encode([1, 2, 3]) }
        #expect(throws: FLACCodecError.invalidBlock("1025 frames, more than a block's 1024")) { try encoder.encode([Int16](repeating: 0, count: 2_050)) }
        #expect(throws: FLACCodecError.unsupportedFormat("9 channels (FLAC: 1 to 8)")) { try FLACBlockEncoder(sampleRate: 44_100, channelCount: 9) }
    }
}
