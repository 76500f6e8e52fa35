/// The audio a speaker route has rendered and its speakers may still need: media frames
/// `startFrame..<endFrame` of interleaved Float32, kept until they are heard so that a speaker
/// that reconnects (or answers a flush with a later frame) is sent what it is missing. A value
/// type; its owner serialises access.
struct SentAudio {
    /// Interleaved channels.
    let channelCount: Int
    /// The first frame held.
    private(set) var startFrame: Int64 = 0
    private var samples: [Float] = []
    /// Played frames are dropped in batches of this many seconds' worth, not one copy per period.
    private let discardBatchFrames: Int64
    /// The longest gap filled with silence (30 s).
    private let maximumGapFrames: Int64
    /// The gaps held as silence (paused spans, not rendered), ascending and within what is held.
    /// They are never sent (a speaker fills a gap with silence itself), so the audio after one
    /// goes out right behind the anchor that resumes it.
    private(set) var unrenderedSpans: [Range<Int64>] = []

    /// An empty history.
    init(channelCount: Int, sampleRate: Int) {
        self.channelCount = channelCount
        discardBatchFrames = Int64(sampleRate * 5)
        maximumGapFrames = Int64(sampleRate * 30)
    }

    /// One past the last frame held.
    var endFrame: Int64 { startFrame + Int64(samples.count / channelCount) }

    /// Adds `frames` (interleaved) at `frame`: right after what is held; after a short jump
    /// forward (a paused span not rendered), after an unrendered span, so that a speaker still
    /// catching up keeps what it has not been sent; otherwise instead of what is held.
    mutating func append(_ frames: UnsafeBufferPointer<Float>, at frame: Int64) {
        if frame > endFrame && frame - endFrame <= maximumGapFrames && !samples.isEmpty {
            if let last = unrenderedSpans.last, last.upperBound == endFrame {
                unrenderedSpans[unrenderedSpans.count - 1] = last.lowerBound..<frame
            } else {
                unrenderedSpans.append(endFrame..<frame)
            }
            // Not `repeatElement`: a debug build appends that one element at a time (0.1 s for a second's gap).
            samples.append(contentsOf: [Float](repeating: 0, count: Int(frame - endFrame) * channelCount))
        } else if frame != endFrame {
            samples.removeAll(keepingCapacity: true)
            unrenderedSpans.removeAll()
            startFrame = frame
        }
        samples.append(contentsOf: frames)
    }

    /// Drops the frames from `frame` on.
    mutating func truncate(from frame: Int64) {
        guard frame < endFrame else { return }
        samples.removeSubrange(Int(max(frame - startFrame, 0)) * channelCount..<samples.count)
        unrenderedSpans = unrenderedSpans.compactMap { $0.lowerBound < frame ? $0.clamped(to: $0.lowerBound..<frame) : nil }
    }

    /// Drops the frames before `frame` (heard), once there are enough of them to be worth a copy.
    mutating func discard(before frame: Int64) {
        let count = min(frame, endFrame) - startFrame
        guard count >= discardBatchFrames else { return }
        samples.removeSubrange(0..<(Int(count) * channelCount))
        startFrame += count
        unrenderedSpans = unrenderedSpans.compactMap { $0.upperBound > startFrame ? $0.clamped(to: startFrame..<$0.upperBound) : nil }
    }

    /// The first frame from `frame` on that is not in an unrendered span.
    func firstRenderedFrame(from frame: Int64) -> Int64 {
        // Ascending spans: one pass also steps over spans that touch.
        unrenderedSpans.reduce(frame) { frame, span in span.contains(frame) ? span.upperBound : frame }
    }

    /// Up to `count` frames from `frame` on, ending before the next unrendered span.
    func renderedFrames(from frame: Int64, count: Int) -> ArraySlice<Float> {
        let nextSpan = unrenderedSpans.first { $0.lowerBound > frame }?.lowerBound ?? .max
        return frames(from: frame, count: Int(min(Int64(count), max(nextSpan - frame, 0))))
    }

    /// How many frames of `range` are not in an unrendered span.
    func renderedFrameCount(in range: Range<Int64>) -> Int64 {
        guard !range.isEmpty else { return 0 }
        return unrenderedSpans.reduce(Int64(range.count)) { count, span in count - Int64(span.clamped(to: range).count) }
    }

    /// Up to `count` frames from `frame` on (fewer at the end of what is held).
    func frames(from frame: Int64, count: Int) -> ArraySlice<Float> {
        let first = Int(min(max(frame - startFrame, 0), endFrame - startFrame))
        let last = min(first + count, Int(endFrame - startFrame))
        return samples[(first * channelCount)..<(last * channelCount)]
    }
}
