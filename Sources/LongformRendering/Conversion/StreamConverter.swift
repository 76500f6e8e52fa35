import LongformCore

/// Audio in the route's format, placed on the timeline in route frames.
struct RenderChunk {
    /// The media time of the first frame, in route frames (media seconds × route rate).
    var startFrame: Int64
    /// Interleaved Float32 in the route's channel count.
    var samples: [Float]
    /// The output presentation time of the buffer it came from (what `flush(fromSourceTime:)` compares).
    var sourceTime: MediaTime
    /// Whether it came out of a resampler, whose output lags its input by the filter's delay: such
    /// chunks straddle their buffers' boundaries, and a flush cuts them at the exact frame.
    var isResampled = false

    var frameCount: Int
    var endFrame: Int64 { startFrame + Int64(frameCount) }
}

/// Turns enqueued sample buffers into render chunks in the route's format. Buffers whose times
/// follow each other exactly at another rate pass through one continuous resampler, so that the
/// filter does not restart at every buffer; each such run ends exactly at its timeline length.
struct StreamConverter {
    let outputRate: Int
    let outputChannels: Int

    private struct Run {
        var resampler: Resampler
        var inputRate: Int
        var startTime: MediaTime
        var startFrame: Int64
        var inputFrames: Int64 = 0
        var outputFrames: Int64 = 0
        var nextInputTime: MediaTime
        var lastSourceTime: MediaTime
    }
    private var run: Run?

    init(outputRate: Int, outputChannels: Int) {
        self.outputRate = outputRate
        self.outputChannels = outputChannels
    }

    /// The route frame of media time `time`.
    func routeFrame(of time: MediaTime) -> Int64 {
        time.convertScale(Int32(outputRate), method: .roundHalfAwayFromZero).value
    }

    /// Converts one PCM buffer; may return nothing yet (a resampler filling) or a previous run's tail.
    mutating func convert(_ buffer: SampleBuffer) -> [RenderChunk] {
        let samples = PCMConverter.interleavedFloat(buffer, channelCount: outputChannels)
        let frames = samples.count / outputChannels
        let time = buffer.outputPresentationTime
        if buffer.format.sampleRate == outputRate {
            var chunks = finish()
            if frames > 0 { chunks.append(RenderChunk(startFrame: routeFrame(of: time), samples: samples, sourceTime: time, frameCount: frames)) }
            return chunks
        }
        var chunks: [RenderChunk] = []
        if let open = run, open.inputRate != buffer.format.sampleRate || open.nextInputTime != time {
            chunks = finish()
        }
        if run == nil {
            guard let resampler = Resampler(inputRate: buffer.format.sampleRate, outputRate: outputRate, channelCount: outputChannels) else { return chunks }
            // Buffers are remixed to the route's channels first, so only the rate starts a new run.
            run = Run(resampler: resampler, inputRate: buffer.format.sampleRate,
                      startTime: time, startFrame: routeFrame(of: time), nextInputTime: time, lastSourceTime: time)
        }
        guard var open = run else { return chunks }
        let output = open.resampler.process(samples)
        let produced = output.count / outputChannels
        if produced > 0 {
            chunks.append(RenderChunk(startFrame: open.startFrame + open.outputFrames, samples: output, sourceTime: time, isResampled: true, frameCount: produced))
        }
        open.outputFrames += Int64(produced)
        open.inputFrames += Int64(frames)
        open.nextInputTime = time + MediaTime(value: Int64(frames), timescale: Int32(open.inputRate))
        open.lastSourceTime = time
        run = open
        return chunks
    }

    /// Ends the open resampling run: its filter tail, cut or padded so the run spans exactly its timeline length.
    mutating func finish() -> [RenderChunk] {
        guard let open = run else { return [] }
        run = nil
        let target = routeFrame(of: open.nextInputTime) - open.startFrame
        var tail = open.resampler.flush()
        let missing = target - open.outputFrames
        if missing <= 0 { return [] }
        let tailFrames = tail.count / outputChannels
        if tailFrames > missing {
            tail.removeSubrange(Int(missing) * outputChannels ..< tail.count)
        } else if tailFrames < missing {
            tail.append(contentsOf: [Float](repeating: 0, count: (Int(missing) - tailFrames) * outputChannels))
        }
        return [RenderChunk(startFrame: open.startFrame + open.outputFrames, samples: tail, sourceTime: open.lastSourceTime, isResampled: true, frameCount: Int(missing))]
    }

    /// Drops the open run without its tail (after a flush).
    mutating func reset() { run = nil }
}
