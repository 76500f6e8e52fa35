import LongformCore

/// Converts PCM of any layout and sample format to interleaved Float32 with another channel count.
enum PCMConverter {
    /// The heard frames of `buffer` (after its trims) as interleaved Float32 with `channelCount` channels.
    static func interleavedFloat(_ buffer: SampleBuffer, channelCount outputChannels: Int) -> [Float] {
        guard case .pcm(let planes) = buffer.content else { return [] }
        let format = buffer.format
        let first = buffer.trimmedFramesAtStart
        let count = buffer.outputFrameCount
        let inputChannels = format.channelCount
        // Decode to interleaved Float32 at the input channel count first. Every sample is written
        // (SampleBuffer guarantees each plane holds its frames), so the array is not zeroed first:
        // zeroing it cost about a tenth of the decoding thread's time.
        let samples = [Float](unsafeUninitializedCapacity: count * inputChannels) { out, initialized in
            initialized = count * inputChannels
            for (planeIndex, plane) in planes.enumerated() {
                plane.withUnsafeBytes { raw in
                    switch format.sampleFormat {
                    case .int16: copy(raw.bindMemory(to: Int16.self), into: out, format: format, plane: planeIndex, first: first, count: count) { Float($0) * (1.0 / 32768.0) }
                    case .int32: copy(raw.bindMemory(to: Int32.self), into: out, format: format, plane: planeIndex, first: first, count: count) { Float(Double($0) * (1.0 / 2147483648.0)) }
                    case .float32: copy(raw.bindMemory(to: Float.self), into: out, format: format, plane: planeIndex, first: first, count: count) { $0 }
                    case .float64: copy(raw.bindMemory(to: Double.self), into: out, format: format, plane: planeIndex, first: first, count: count) { Float($0) }
                    }
                }
            }
        }
        return inputChannels == outputChannels ? samples : remix(samples, from: inputChannels, to: outputChannels)
    }

    /// Copies frames `first..<first+count` of one plane into interleaved `out`, converting each sample.
    @inline(__always)
    private static func copy<Sample>(_ source: UnsafeBufferPointer<Sample>, into out: UnsafeMutableBufferPointer<Float>, format: AudioFormat,
                                     plane: Int, first: Int, count: Int, _ convert: (Sample) -> Float) {
        let channels = format.channelCount
        if format.isInterleaved {
            let base = first * channels
            for index in 0..<(count * channels) { out[index] = convert(source[base + index]) }
        } else {
            for frame in 0..<count { out[frame * channels + plane] = convert(source[first + frame]) }
        }
    }

    /// Maps channels: mono spreads to the front pair, more channels fold down with ITU-R BS.775 weights.
    static func remix(_ samples: [Float], from input: Int, to output: Int) -> [Float] {
        let frames = samples.count / input
        let matrix = mixMatrix(from: input, to: output)
        return [Float](unsafeUninitializedCapacity: frames * output) { result, initialized in
            for frame in 0..<frames {
                for out in 0..<output {
                    var sum: Float = 0
                    for inChannel in 0..<input where matrix[out][inChannel] != 0 {
                        sum += matrix[out][inChannel] * samples[frame * input + inChannel]
                    }
                    result[frame * output + out] = sum
                }
            }
            initialized = frames * output
        }
    }

    /// `matrix[out][in]`: the weight of input channel `in` in output channel `out`.
    static func mixMatrix(from input: Int, to output: Int) -> [[Float]] {
        var matrix = Array(repeating: Array(repeating: Float(0), count: input), count: output)
        if input == 1 {
            for out in 0..<min(output, 2) { matrix[out][0] = 1 }
        } else if output == 1 {
            for inChannel in 0..<min(input, 2) { matrix[0][inChannel] = 0.5 }
        } else if output == 2 && input >= 3 {
            // FL FR FC LFE BL BR (SMPTE order): centre and surrounds at −3 dB, normalised so peaks do not clip.
            let centre: Float = 0.7071
            let norm: Float = 1 / (1 + centre + (input >= 5 ? centre : 0))
            matrix[0][0] = norm; matrix[1][1] = norm
            matrix[0][2] = centre * norm; matrix[1][2] = centre * norm
            if input >= 6 { matrix[0][4] = centre * norm; matrix[1][5] = centre * norm }
            else if input == 5 { matrix[0][3] = centre * norm; matrix[1][4] = centre * norm }
        } else {
            for channel in 0..<min(input, output) { matrix[channel][channel] = 1 }
        }
        return matrix
    }
}
