import CSoxr

/// Owns a libsoxr resampler (interleaved Float32 in and out, high quality) and deletes it in `deinit`.
final class Resampler {
    private let handle: soxr_t
    let channelCount: Int

    /// A resampler from `inputRate` to `outputRate`; nil when soxr refuses the rates.
    init?(inputRate: Int, outputRate: Int, channelCount: Int) {
        var error: soxr_error_t? = nil
        var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
        guard let handle = soxr_create(Double(inputRate), Double(outputRate), UInt32(channelCount), &error, &io, &quality, nil), error == nil else {
            return nil
        }
        self.handle = handle
        self.channelCount = channelCount
        self.ratio = Double(outputRate) / Double(inputRate)
    }

    private let ratio: Double

    deinit { soxr_delete(handle) }

    /// Resamples `input` (interleaved frames); returns what the filter can output so far.
    func process(_ input: [Float]) -> [Float] {
        let inputFrames = input.count / channelCount
        let capacity = Int((Double(inputFrames) * ratio).rounded(.up)) + 64
        var output = [Float](repeating: 0, count: capacity * channelCount)
        var consumed = 0
        var produced = 0
        input.withUnsafeBufferPointer { inPointer in
            output.withUnsafeMutableBufferPointer { outPointer in
                _ = soxr_process(handle, inPointer.baseAddress, inputFrames, &consumed, outPointer.baseAddress, capacity, &produced)
            }
        }
        output.removeSubrange((produced * channelCount)...)
        return output
    }

    /// Drains the filter's tail at the end of a stream.
    func flush() -> [Float] {
        var output: [Float] = []
        var chunk = [Float](repeating: 0, count: 4096 * channelCount)
        while true {
            var produced = 0
            chunk.withUnsafeMutableBufferPointer { outPointer in
                _ = soxr_process(handle, nil, 0, nil, outPointer.baseAddress, 4096, &produced)
            }
            if produced == 0 { break }
            output.append(contentsOf: chunk[0..<(produced * channelCount)])
        }
        return output
    }
}
