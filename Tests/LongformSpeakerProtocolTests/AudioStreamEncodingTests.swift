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

    @Test func anyCollectionEncodesAsItsArrayDoes() {
        let samples: [Float] = (0..<1_000).map { Float($0) / 1_000 - 0.5 }
        for encoding in [AudioStreamFormat.Encoding.float32, .signed16] {
            let contiguous = encoding.encode(samples[100..<900])
            #expect(encoding.encode(samples[100..<900].lazy.map { $0 }) == contiguous)
            #expect(contiguous.count == 800 * (encoding == .float32 ? 4 : 2))
        }
    }

    @Test func aTrailingPartialSampleIsIgnored() {
        #expect(AudioStreamFormat.Encoding.float32.decode([0x00, 0x00, 0x80, 0x3F, 0x01, 0x02]) == [1.0])
        #expect(AudioStreamFormat.Encoding.signed16.decode([0x00, 0x40, 0x7F]) == [0.5])
        #expect(AudioStreamFormat.Encoding.float32.decode([]) == [])
    }
}
