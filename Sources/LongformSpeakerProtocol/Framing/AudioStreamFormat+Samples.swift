extension AudioStreamFormat.Encoding {
    /// Float32 samples as this encoding's little-endian bytes (16-bit: scaled, rounded and clipped).
    public func encode(_ samples: some Collection<Float>) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(samples.count * bytesPerSample)
        for sample in samples {
            switch self {
            case .float32:
                withUnsafeBytes(of: sample.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            case .signed16:
                let value = Int16(max(-32_768, min(32_767, (sample * 32_768).rounded())))
                withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
            }
        }
        return bytes
    }

    /// This encoding's little-endian bytes as Float32 samples (a trailing partial sample is ignored).
    public func decode(_ bytes: [UInt8]) -> [Float] {
        switch self {
        case .signed16:
            return stride(from: 0, to: bytes.count - 1, by: 2).map { (index: Int) -> Float in
                let bits = UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
                return Float(Int16(bitPattern: bits)) / 32_768
            }
        case .float32:
            return stride(from: 0, to: bytes.count - 3, by: 4).map { (index: Int) -> Float in
                var bits = UInt32(bytes[index])
                bits |= UInt32(bytes[index + 1]) << 8
                bits |= UInt32(bytes[index + 2]) << 16
                bits |= UInt32(bytes[index + 3]) << 24
                return Float(bitPattern: bits)
            }
        }
    }
}
