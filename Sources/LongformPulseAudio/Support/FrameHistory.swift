/// The frames a route last wrote, by route frame, in a ring of fixed size.
///
/// A route that flushes a server stream resumes where the server was about to play, which can be
/// before the frame a rewind asked for. The frames in between were not changed, and are written
/// again from here as they were: rendering them again would read the renderer's queue as it is
/// now, which after a flush may hold other audio at the old timeline's media times (a restart that
/// reused them had a few milliseconds of the new item come out ahead of its start).
struct FrameHistory {
    /// Frames it holds at most.
    let capacityFrames: Int
    /// Interleaved samples per frame.
    let channelCount: Int
    private var samples: [Float]
    /// The first frame it holds: it holds `startFrame..<endFrame`, written one after the other.
    private(set) var startFrame: Int64 = 0
    /// The frame after the last it holds.
    private(set) var endFrame: Int64 = 0

    /// An empty history of up to `capacityFrames` frames of `channelCount` interleaved channels.
    init(capacityFrames: Int, channelCount: Int) {
        precondition(capacityFrames > 0 && channelCount > 0)
        self.capacityFrames = capacityFrames
        self.channelCount = channelCount
        samples = [Float](repeating: 0, count: capacityFrames * channelCount)
    }

    /// Notes `frames` (interleaved) as written from route frame `frame` on. What it held from
    /// `frame` on is replaced; a write that does not follow on from what it holds starts it afresh.
    mutating func record(_ frames: UnsafeBufferPointer<Float>, at frame: Int64) {
        let count = frames.count / channelCount
        if frame < startFrame || frame > endFrame { startFrame = frame }
        endFrame = frame + Int64(count)
        startFrame = max(startFrame, endFrame - Int64(capacityFrames))
        // Of a write longer than the ring, only its end stays.
        let skipped = count - min(count, capacityFrames)
        let channels = channelCount, stretches = stretches(from: frame + Int64(skipped), count: count - skipped)
        samples.withUnsafeMutableBufferPointer { ring in
            for (position, offset, length) in stretches {
                let source = UnsafeBufferPointer(rebasing: frames[((skipped + offset) * channels)..<((skipped + offset + length) * channels)])
                _ = UnsafeMutableBufferPointer(rebasing: ring[(position * channels)...]).update(fromContentsOf: source)
            }
        }
    }

    /// Whether it holds every frame of `frames`.
    func holds(_ frames: Range<Int64>) -> Bool { frames.lowerBound >= startFrame && frames.upperBound <= endFrame }

    /// Copies frames `frame..<frame + count` into `destination` (interleaved); false, with nothing
    /// copied, unless it holds all of them.
    func copy(from frame: Int64, count: Int, into destination: UnsafeMutableBufferPointer<Float>) -> Bool {
        guard count >= 0, holds(frame..<(frame + Int64(count))), destination.count >= count * channelCount else { return false }
        let channels = channelCount
        samples.withUnsafeBufferPointer { ring in
            for (position, offset, length) in stretches(from: frame, count: count) {
                let source = UnsafeBufferPointer(rebasing: ring[(position * channels)..<((position + length) * channels)])
                _ = UnsafeMutableBufferPointer(rebasing: destination[(offset * channels)...]).update(fromContentsOf: source)
            }
        }
        return true
    }

    /// Frames `frame..<frame + count` (at most the ring's size) as at most two stretches of the
    /// ring: where each starts in the ring, its offset from `frame`, and its length.
    private func stretches(from frame: Int64, count: Int) -> [(position: Int, offset: Int, length: Int)] {
        var result: [(position: Int, offset: Int, length: Int)] = []
        var offset = 0
        while offset < count {
            let position = Int(((frame + Int64(offset)) % Int64(capacityFrames) + Int64(capacityFrames)) % Int64(capacityFrames))
            let length = min(count - offset, capacityFrames - position)
            result.append((position, offset, length))
            offset += length
        }
        return result
    }
}
