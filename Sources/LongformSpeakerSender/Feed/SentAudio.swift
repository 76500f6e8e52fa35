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

    /// An empty history.
    init(channelCount: Int, sampleRate: Int) {
        self.channelCount = channelCount
        discardBatchFrames = Int64(sampleRate * 5)
        maximumGapFrames = Int64(sampleRate * 30)
    }

    /// One past the last frame held.
    var endFrame: Int64 { startFrame + Int64(samples.count / channelCount) }

    /// Adds `frames` (interleaved) at `frame`: right after what is held; after a short jump
    /// forward (a paused span not rendered), after silence in the gap, so that a speaker still
    /// catching up keeps what it has not been sent; otherwise instead of what is held.
    mutating func append(_ frames: UnsafeBufferPointer<Float>, at frame: Int64) {
        if frame > endFrame && frame - endFrame <= maximumGapFrames && !samples.isEmpty {
            samples.append(contentsOf: repeatElement(0, count: Int(frame - endFrame) * channelCount))
        } else if frame != endFrame {
            samples.removeAll(keepingCapacity: true)
            startFrame = frame
        }
        samples.append(contentsOf: frames)
    }

    /// Drops the frames from `frame` on.
    mutating func truncate(from frame: Int64) {
        guard frame < endFrame else { return }
        samples.removeSubrange(Int(max(frame - startFrame, 0)) * channelCount..<samples.count)
    }

    /// Drops the frames before `frame` (heard), once there are enough of them to be worth a copy.
    mutating func discard(before frame: Int64) {
        let count = min(frame, endFrame) - startFrame
        guard count >= discardBatchFrames else { return }
        samples.removeSubrange(0..<(Int(count) * channelCount))
        startFrame += count
    }

    /// Up to `count` frames from `frame` on (fewer at the end of what is held).
    func frames(from frame: Int64, count: Int) -> ArraySlice<Float> {
        let first = Int(min(max(frame - startFrame, 0), endFrame - startFrame))
        let last = min(first + count, Int(endFrame - startFrame))
        return samples[(first * channelCount)..<(last * channelCount)]
    }
}
