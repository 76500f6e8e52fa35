extension AudioStreamFormat.Encoding {
    /// Float32 samples as this encoding's little-endian bytes (16-bit: scaled, rounded and clipped).
    public func encode(_ samples: some Collection<Float>) -> [UInt8] {
        // One pass over contiguous memory: the sender encodes every sample it sends to every
        // speaker, and an element-by-element walk through a generic collection held its fill
        // to a fraction of what the network carries.
        if let bytes = samples.withContiguousStorageIfAvailable({ encode(contiguous: $0) }) { return bytes }
        return Array(samples).withUnsafeBufferPointer { encode(contiguous: $0) }
    }

    /// This encoding's little-endian bytes as Float32 samples (a trailing partial sample is ignored).
    public func decode(_ bytes: [UInt8]) -> [Float] {
        bytes.withUnsafeBytes { raw in
            let count = raw.count / bytesPerSample
            return [Float](unsafeUninitializedCapacity: count) { samples, initialized in
                switch self {
                case .signed16:
                    for index in 0..<count {
                        samples[index] = Float(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: index * 2, as: Int16.self))) / 32_768
                    }
                case .float32:
                    for index in 0..<count {
                        samples[index] = Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)))
                    }
                }
                initialized = count
            }
        }
    }

    /// `samples` as this encoding's bytes, written straight into the array's storage.
    private func encode(contiguous samples: UnsafeBufferPointer<Float>) -> [UInt8] {
        let count = samples.count * bytesPerSample
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let bytes = UnsafeMutableRawBufferPointer(buffer)
            switch self {
            case .float32:
                for (index, sample) in samples.enumerated() {
                    bytes.storeBytes(of: sample.bitPattern.littleEndian, toByteOffset: index * 4, as: UInt32.self)
                }
            case .signed16:
                for (index, sample) in samples.enumerated() {
                    let value = Int16(max(-32_768, min(32_767, (sample * 32_768).rounded())))
                    bytes.storeBytes(of: value.littleEndian, toByteOffset: index * 2, as: Int16.self)
                }
            }
            initialized = count
        }
    }
}
