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
            // Written in place (not appended a byte at a time) and rounded without libm's rintf:
            // a playing speaker spent 7 % of its route thread here.
            output.append(contentsOf: repeatElement(0, count: samples.count * 2))
            output.withUnsafeMutableBytes { bytes in
                for (index, sample) in samples.enumerated() {
                    let value = Int16(Self.roundedToNearestEven(sample * 32768, low: -32768, high: 32767))
                    bytes.storeBytes(of: value.littleEndian, toByteOffset: 2 * index, as: Int16.self)
                }
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

extension OutputSampleFormat {
    /// `value` clipped to `low...high` (integers within ±2²²) and rounded to the nearest integer,
    /// ties to even, as rintf rounds: 1.5 × 2²³ added and taken away leaves a Float with no
    /// fraction bits, rounded by the FPU's default mode.
    @inline(__always)
    static func roundedToNearestEven(_ value: Float, low: Float, high: Float) -> Int32 {
        let magic: Float = 12_582_912
        return Int32((value.clamped(low, high) + magic) - magic)
    }
}

extension FloatingPoint {
    func clamped(_ low: Self, _ high: Self) -> Self { min(max(self, low), high) }
}
