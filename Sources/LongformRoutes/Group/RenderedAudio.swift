/// The audio a group's leading member rendered, by route frame, for the members that follow it:
/// what they play is then the very audio the leader sent, whatever the renderer does meanwhile.
///
/// Invariants: chunks are in frame order and do not overlap; a chunk recorded replaces all from
/// its first frame on (a route renders in order, and again from a rewind). A rewind makes the
/// audio from its frame on tentative: not read until the leader either renders it again (it is
/// replaced) or resumes later, keeping the old audio up to where it resumed (`confirm`). Audio
/// the leader began to render before a rewind came (its `generation` is older) is tentative from
/// the rewind's frame on too: it was rendered by the timeline the rewind changed.
package struct RenderedAudio {
    private struct Chunk {
        var start: Int64
        var samples: [Float]
        var isTentative: Bool
    }

    package let channelCount: Int
    private var chunks: [Chunk] = []
    /// The earliest frame of the rewinds since the leader last began a render.
    private var pendingRewind: Int64?
    /// Counts the rewinds: a render begun in an older generation may hold audio they took back.
    package private(set) var generation = 0

    package init(channelCount: Int) { self.channelCount = channelCount }

    /// Frames held, tentative or not.
    package var frameCount: Int64 { chunks.reduce(0) { $0 + frames(of: $1) } }

    /// Keeps `samples` (interleaved) as frames from `frame` on, dropping all held from there on;
    /// the leader began rendering them in `generation`. Those past a rewind that came since are tentative.
    package mutating func record(_ samples: UnsafeBufferPointer<Float>, at frame: Int64, renderedInGeneration generation: Int) {
        guard !samples.isEmpty else { return }
        dropFrames(from: frame)
        chunks.append(Chunk(start: frame, samples: Array(samples), isTentative: false))
        if generation == self.generation {
            pendingRewind = nil
        } else if let pending = pendingRewind {
            markTentative(from: pending)
        }
    }

    /// A rewind to `frame`: the audio from there on waits for the leader's answer.
    package mutating func rewind(toFrame frame: Int64) {
        generation += 1
        pendingRewind = min(pendingRewind ?? frame, frame)
        markTentative(from: frame)
    }

    private mutating func markTentative(from frame: Int64) {
        split(at: frame)
        for index in chunks.indices where chunks[index].start >= frame { chunks[index].isTentative = true }
    }

    /// The leader resumed at `frame`: the audio before it plays as it was.
    package mutating func confirm(before frame: Int64) {
        split(at: frame)
        for index in chunks.indices where chunks[index].start < frame { chunks[index].isTentative = false }
        pendingRewind = nil
    }

    /// The frames from `frame` on that can be read now, in a row.
    package func readableFrameCount(from frame: Int64) -> Int64 {
        var next = frame
        for chunk in chunks where !chunk.isTentative {
            let end = chunk.start + frames(of: chunk)
            guard end > next else { continue }
            guard chunk.start <= next else { break }
            next = end
        }
        return next - frame
    }

    /// Copies frames `frame..<frame + count` into `out` (silence where none can be read); returns
    /// the frames that came from recorded audio.
    package func read(into out: UnsafeMutableBufferPointer<Float>, from frame: Int64, count: Int) -> Int {
        out.update(repeating: 0)
        var copied = 0
        let end = frame + Int64(count)
        for chunk in chunks where !chunk.isTentative {
            let chunkEnd = chunk.start + frames(of: chunk)
            let from = max(frame, chunk.start), to = min(end, chunkEnd)
            guard from < to else { continue }
            let source = Int(from - chunk.start) * channelCount, destination = Int(from - frame) * channelCount
            let sampleCount = Int(to - from) * channelCount
            chunk.samples.withUnsafeBufferPointer { samples in
                for index in 0..<sampleCount { out[destination + index] = samples[source + index] }
            }
            copied += Int(to - from)
        }
        return copied
    }

    /// Forgets the audio that ends before `frame` (heard long ago).
    package mutating func discard(before frame: Int64) {
        let channels = channelCount
        chunks.removeAll { $0.start + Int64($0.samples.count / channels) <= frame }
    }

    private func frames(of chunk: Chunk) -> Int64 { Int64(chunk.samples.count / channelCount) }

    private mutating func dropFrames(from frame: Int64) {
        split(at: frame)
        chunks.removeAll { $0.start >= frame }
    }

    /// Splits the chunk that holds `frame` inside it into two at `frame`.
    private mutating func split(at frame: Int64) {
        guard let index = chunks.firstIndex(where: { $0.start < frame && $0.start + frames(of: $0) > frame }) else { return }
        let chunk = chunks[index]
        let cut = Int(frame - chunk.start) * channelCount
        chunks[index].samples = Array(chunk.samples[..<cut])
        chunks.insert(Chunk(start: frame, samples: Array(chunk.samples[cut...]), isTentative: chunk.isTentative), at: index + 1)
    }
}
