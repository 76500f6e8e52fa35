import LongformCore

/// The renderer's enqueued audio, in the route's format, ordered on the timeline in route frames.
struct RenderQueue {
    private var chunks: [RenderChunk] = []
    private var head = 0
    let channelCount: Int
    /// Samples held, for the memory bound.
    private(set) var sampleCount = 0

    init(channelCount: Int) { self.channelCount = channelCount }

    var isEmpty: Bool { head == chunks.count }
    /// The route frame just past the last enqueued audio (nil when empty).
    var endFrame: Int64? { isEmpty ? nil : chunks[chunks.count - 1].endFrame }
    /// The first enqueued route frame (nil when empty).
    var startFrame: Int64? { isEmpty ? nil : chunks[head].startFrame }
    /// Bytes of PCM held.
    var byteCount: Int { sampleCount * MemoryLayout<Float>.size }

    /// Adds chunks after the ones already queued.
    mutating func append(_ newChunks: [RenderChunk]) {
        for chunk in newChunks where chunk.frameCount > 0 {
            chunks.append(chunk)
            sampleCount += chunk.samples.count
        }
    }

    /// Drops everything.
    mutating func removeAll() {
        chunks.removeAll(keepingCapacity: true)
        head = 0
        sampleCount = 0
    }

    /// Drops the chunks whose source buffer's output time is at or after `time` (route frame
    /// `frame`). Resampled chunks, which straddle their buffers, are cut at exactly `frame` instead,
    /// and so is every chunk when `cuttingEveryChunk` (a cut at the playhead, inside a buffer).
    mutating func removeChunks(fromSourceTime time: MediaTime, routeFrame frame: Int64, cuttingEveryChunk: Bool = false) {
        compact()
        var kept: [RenderChunk] = []
        kept.reserveCapacity(chunks.count)
        for var chunk in chunks {
            let keepFrames: Int
            if chunk.isResampled || cuttingEveryChunk {
                keepFrames = Int(min(max(frame - chunk.startFrame, 0), Int64(chunk.frameCount)))
            } else {
                keepFrames = chunk.sourceTime >= time ? 0 : chunk.frameCount
            }
            sampleCount -= (chunk.frameCount - keepFrames) * channelCount
            guard keepFrames > 0 else { continue }
            if keepFrames < chunk.frameCount {
                chunk.samples.removeSubrange((keepFrames * channelCount)...)
                chunk.frameCount = keepFrames
            }
            kept.append(chunk)
        }
        chunks = kept
    }

    /// Copies media frames `start..<start+count` into `out` (silence where nothing is queued) and
    /// drops chunks that end before `start + count` and before `retainedFrame` (audio a rewindable
    /// route may render again). Returns the frames that came from the queue.
    @discardableResult
    mutating func read(into out: UnsafeMutableBufferPointer<Float>, from start: Int64, count: Int, retainingFrom retainedFrame: Int64 = .max) -> Int {
        let end = start + Int64(count)
        var index = head
        var covered = 0
        var cursor = start
        let channels = channelCount
        while index < chunks.count {
            let chunk = chunks[index]
            if chunk.startFrame >= end { break }
            if chunk.endFrame > cursor {
                let from = max(chunk.startFrame, cursor)
                let to = min(chunk.endFrame, end)
                if from > cursor { fillSilence(out, frames: Int(cursor - start)..<Int(from - start)) }
                chunk.samples.withUnsafeBufferPointer { samples in
                    let sourceOffset = Int(from - chunk.startFrame) * channels
                    let destinationOffset = Int(from - start) * channels
                    let length = Int(to - from) * channels
                    out.baseAddress!.advanced(by: destinationOffset).update(from: samples.baseAddress!.advanced(by: sourceOffset), count: length)
                }
                covered += Int(to - from)
                cursor = to
            }
            index += 1
        }
        if cursor < end { fillSilence(out, frames: Int(cursor - start)..<count) }
        // Drop what is fully played.
        let dropEnd = min(end, retainedFrame)
        while head < chunks.count && chunks[head].endFrame <= dropEnd {
            sampleCount -= chunks[head].samples.count
            // Freed now, not at the next compaction (up to 64 chunks later): the decoder's next
            // buffer then reuses this memory instead of faulting in fresh pages.
            chunks[head].samples = []
            head += 1
        }
        if head > 64 && head * 2 > chunks.count { compact() }
        return covered
    }

    private mutating func compact() {
        chunks.removeFirst(head)
        head = 0
    }

    private func fillSilence(_ out: UnsafeMutableBufferPointer<Float>, frames: Range<Int>) {
        guard !frames.isEmpty else { return }
        out.baseAddress!.advanced(by: frames.lowerBound * channelCount).update(repeating: 0, count: frames.count * channelCount)
    }
}
