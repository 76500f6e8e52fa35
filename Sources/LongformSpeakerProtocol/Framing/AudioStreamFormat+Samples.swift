extension AudioStreamFormat.Encoding {
    /// Float32 samples as this PCM encoding's little-endian bytes (16-bit: scaled, rounded and
    /// clipped as `signed16Sample(_:)`). FLAC blocks are made by a block encoder, not here.
    public func encode(_ samples: some Collection<Float>) -> [UInt8] {
        precondition(!isCompressed, "\(self) blocks are made by a block encoder, not sample by sample")
        // One pass over contiguous memory: the sender encodes every sample it sends to every
        // speaker, and an element-by-element walk through a generic collection held its fill
        // to a fraction of what the network carries.
        if let bytes = samples.withContiguousStorageIfAvailable({ encode(contiguous: $0) }) { return bytes }
        return Array(samples).withUnsafeBufferPointer { encode(contiguous: $0) }
    }

    /// This PCM encoding's little-endian bytes as Float32 samples (a trailing partial sample is ignored).
    public func decode(_ bytes: [UInt8]) -> [Float] {
        precondition(!isCompressed, "\(self) blocks are decoded by a block decoder, not sample by sample")
        return bytes.withUnsafeBytes { raw in
            let count = raw.count / bytesPerSample
            return [Float](unsafeUninitializedCapacity: count) { samples, initialized in
                if self == .float32 {
                    for index in 0..<count {
                        samples[index] = Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)))
                    }
                } else {
                    for index in 0..<count {
                        samples[index] = Self.floatSample(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: index * 2, as: Int16.self)))
                    }
                }
                initialized = count
            }
        }
    }

    /// A Float32 sample as a 16-bit one: scaled by 32,768, rounded, clipped. Every 16-bit
    /// encoding (PCM and FLAC) goes through it, so that both carry the same samples.
    @inline(__always)
    public static func signed16Sample(_ sample: Float) -> Int16 {
        Int16(max(-32_768, min(32_767, (sample * 32_768).rounded())))
    }

    /// A 16-bit sample as Float32 (the inverse of `signed16Sample(_:)` within the 16-bit range).
    @inline(__always)
    public static func floatSample(_ sample: Int16) -> Float {
        Float(sample) / 32_768
    }

    /// `samples` as this encoding's bytes, written straight into the array's storage.
    private func encode(contiguous samples: UnsafeBufferPointer<Float>) -> [UInt8] {
        let count = samples.count * bytesPerSample
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let bytes = UnsafeMutableRawBufferPointer(buffer)
            if self == .float32 {
                for (index, sample) in samples.enumerated() {
                    bytes.storeBytes(of: sample.bitPattern.littleEndian, toByteOffset: index * 4, as: UInt32.self)
                }
            } else {
                for (index, sample) in samples.enumerated() {
                    bytes.storeBytes(of: Self.signed16Sample(sample).littleEndian, toByteOffset: index * 2, as: Int16.self)
                }
            }
            initialized = count
        }
    }
}
