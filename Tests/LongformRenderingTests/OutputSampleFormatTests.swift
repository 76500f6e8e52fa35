import LongformRoutes
import LongformTestSupport
import Testing

/// 16-bit output written in place and rounded without libm: the bytes are those of rounding each
/// sample to the nearest 16-bit value, ties to even, and clipping, as before.
@Suite struct OutputSampleFormatTests {
    /// The rule, written plainly.
    static func reference(_ sample: Float) -> Int16 {
        Int16(clamping: Int32(min(max((sample * 32768).rounded(.toNearestOrEven), -32768), 32767)))
    }

    @Test func sixteenBitSamplesRoundTiesToEvenAndClip() {
        // Ties (k + 0.5) / 32768 both ways, the ends, beyond them, and a sweep of ordinary values.
        var samples: [Float] = [0, -0.0, 1, -1, 1.5, -1.5, 32767.5 / 32768, -32768.5 / 32768, 0.5 / 32768, 1.5 / 32768, 2.5 / 32768, -0.5 / 32768,
                                -2.5 / 32768, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity]
        var generator = SeededRandomGenerator(seed: 29)
        for _ in 0..<20_000 { samples.append(Float.random(in: -1.2...1.2, using: &generator)) }
        for k in stride(from: -32_768, through: 32_767, by: 97) { samples.append((Float(k) + 0.5) / 32768) }
        var bytes: [UInt8] = [9, 9]
        samples.withUnsafeBufferPointer { OutputSampleFormat.s16.encode($0, into: &bytes) }
        #expect(bytes.count == samples.count * 2)
        let decoded = (0..<samples.count).map { Int16(bitPattern: UInt16(bytes[2 * $0]) | UInt16(bytes[2 * $0 + 1]) << 8) }
        let wrong = samples.indices.filter { decoded[$0] != Self.reference(samples[$0]) }
        #expect(wrong.isEmpty, "\(wrong.prefix(5).map { (samples[$0], decoded[$0], Self.reference(samples[$0])) })")
        #expect(decoded[6] == 32767 && decoded[7] == -32768 && decoded[8] == 0 && decoded[9] == 2 && decoded[10] == 2)
    }
}
