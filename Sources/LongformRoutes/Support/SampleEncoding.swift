/// Sample formats a file or device route writes, converted from the renderer's Float32.
public enum OutputSampleFormat: String, Sendable, CaseIterable {
    /// Signed 16-bit PCM.
    case s16
    /// Signed 24-bit PCM (3 bytes per sample).
    case s24
    /// IEEE 32-bit float.
    case f32

    /// Bytes per sample.
    public var bytesPerSample: Int {
        switch self {
        case .s16: 2
        case .s24: 3
        case .f32: 4
        }
    }

    /// Appends `samples` to `output` as little-endian bytes, rounding to nearest and clipping.
    package func encode(_ samples: UnsafeBufferPointer<Float>, into output: inout [UInt8]) {
        output.removeAll(keepingCapacity: true)
        output.reserveCapacity(samples.count * bytesPerSample)
        switch self {
        case .f32:
            samples.withMemoryRebound(to: UInt8.self) { output.append(contentsOf: $0) }
        case .s16:
            for sample in samples {
                let value = Int16(clamping: Int32((sample * 32768).rounded(.toNearestOrEven).clamped(-32768, 32767)))
                output.append(UInt8(truncatingIfNeeded: value))
                output.append(UInt8(truncatingIfNeeded: value >> 8))
            }
        case .s24:
            for sample in samples {
                let value = Int32((Double(sample) * 8_388_608).rounded(.toNearestOrEven).clamped(-8_388_608, 8_388_607))
                output.append(UInt8(truncatingIfNeeded: value))
                output.append(UInt8(truncatingIfNeeded: value >> 8))
                output.append(UInt8(truncatingIfNeeded: value >> 16))
            }
        }
    }
}

extension FloatingPoint {
    func clamped(_ low: Self, _ high: Self) -> Self { min(max(self, low), high) }
}
