import Testing
import LongformSpeakerProtocol

/// The audio payload's sample encodings: exact bytes on the wire, either way.
@Suite struct AudioStreamEncodingTests {
    @Test func float32IsTheSamplesLittleEndianBitPatterns() {
        let bytes = AudioStreamFormat.Encoding.float32.encode([1.0, -0.5] as [Float])
        #expect(bytes == [0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0xBF])
        #expect(AudioStreamFormat.Encoding.float32.decode(bytes) == [1.0, -0.5])
    }

    @Test func signed16ScalesRoundsAndClips() {
        let bytes = AudioStreamFormat.Encoding.signed16.encode([0.5, -1.0, 2.0, -2.0, 1.0 / 65_536 * 3] as [Float])
        #expect(bytes == [0x00, 0x40, 0x00, 0x80, 0xFF, 0x7F, 0x00, 0x80, 0x02, 0x00])
        #expect(AudioStreamFormat.Encoding.signed16.decode(bytes) == [0.5, -1.0, 32_767 / 32_768, -1.0, 2 / 32_768])
    }

    @Test func everySampleEncodesAsItsOwnBytesFromAnyCollection() {
        // Against a sample-by-sample reference, from a slice and from a collection that has no
        // contiguous storage: 1,000 values over more than the 16-bit range.
        let samples: [Float] = (0..<1_000).map { Float($0) / 400 - 1.25 }
        let float32 = samples[100..<900].flatMap { sample in withUnsafeBytes(of: sample.bitPattern.littleEndian) { Array($0) } }
        let signed16 = samples[100..<900].flatMap { sample -> [UInt8] in
            let value = Int16(max(-32_768, min(32_767, (sample * 32_768).rounded())))
            return [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
        }
        for (encoding, reference) in [(AudioStreamFormat.Encoding.float32, float32), (.signed16, signed16)] {
            #expect(encoding.encode(samples[100..<900]) == reference)
            #expect(encoding.encode(samples[100..<900].lazy.map { $0 }) == reference)
        }
    }

    @Test func aTrailingPartialSampleIsIgnored() {
        #expect(AudioStreamFormat.Encoding.float32.decode([0x00, 0x00, 0x80, 0x3F, 0x01, 0x02]) == [1.0])
        #expect(AudioStreamFormat.Encoding.signed16.decode([0x00, 0x40, 0x7F]) == [0.5])
        #expect(AudioStreamFormat.Encoding.float32.decode([]) == [])
    }
}
