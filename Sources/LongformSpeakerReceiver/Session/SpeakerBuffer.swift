/// The audio a speaker holds, by media frame: a ring of `capacityFrames` frames of interleaved
/// Float32 holding the frames `startFrame..<endFrame`. Minutes of audio, written ahead by the
/// sender, read by the output, dropped once played. A value type with no locks: its owner
/// serialises access.
public struct SpeakerBuffer: Sendable {
    /// Interleaved channels.
    public let channelCount: Int
    /// The most frames it holds.
    public let capacityFrames: Int
    /// The first frame held.
    public private(set) var startFrame: Int64 = 0
    /// One past the last frame held (`startFrame` when empty).
    public private(set) var endFrame: Int64 = 0
    private var samples: [Float]

    /// An empty buffer of `capacityFrames` frames.
    public init(channelCount: Int, capacityFrames: Int) {
        self.channelCount = max(channelCount, 1)
        self.capacityFrames = max(capacityFrames, 1)
        samples = [Float](repeating: 0, count: self.capacityFrames * self.channelCount)
    }

    /// Frames held.
    public var heldFrameCount: Int { Int(endFrame - startFrame) }
    /// Frames that can still be written after `endFrame`.
    public var room: Int { capacityFrames - heldFrameCount }
    /// Whether nothing is held.
    public var isEmpty: Bool { startFrame == endFrame }

    /// Stores `frames` (interleaved) from `firstFrame`; returns how many were stored (fewer when
    /// the buffer fills). Audio from before `endFrame` replaces what was held from there on (a
    /// resend after a flush). Audio after a gap leaves silence in the gap if it fits and starts again
    /// there if not; an empty
    /// buffer starts wherever the audio does.
    @discardableResult
    public mutating func write(_ frames: ArraySlice<Float>, at firstFrame: Int64) -> Int {
        let count = frames.count / channelCount
        guard count > 0 else { return 0 }
        if isEmpty || firstFrame < startFrame || firstFrame - endFrame > Int64(room) {
            // Nothing held that the audio continues (or a gap longer than the room, such as the
            // frames a long pause skipped, which are never played): start again there.
            startFrame = firstFrame
            endFrame = firstFrame
        } else if firstFrame < endFrame {
            endFrame = firstFrame
        } else if firstFrame > endFrame {
            let gap = Int(firstFrame - endFrame)
            fill(from: endFrame, count: gap, with: nil)
            endFrame = firstFrame
        }
        let stored = min(count, room)
        fill(from: endFrame, count: stored, with: frames.prefix(stored * channelCount))
        endFrame += Int64(stored)
        return stored
    }

    /// Copies `count` frames from `frame` into `output` (interleaved); silence where nothing is held.
    /// Silence is never `repeatElement`'s: a debug build copies that one element at a time.
    public func read(from frame: Int64, count: Int, into output: inout [Float]) {
        output.removeAll(keepingCapacity: true)
        output.reserveCapacity(count * channelCount)
        var position = frame
        while position < frame + Int64(count) {
            if position >= startFrame && position < endFrame {
                let index = ringIndex(position)
                let run = min(Int(endFrame - position), capacityFrames - index, Int(frame + Int64(count) - position))
                output.append(contentsOf: samples[(index * channelCount)..<((index + run) * channelCount)])
                position += Int64(run)
            } else {
                // Silence up to the next held frame, or to the end of the request.
                let next = position < startFrame ? min(startFrame, frame + Int64(count)) : frame + Int64(count)
                output.append(contentsOf: [Float](repeating: 0, count: Int(next - position) * channelCount))
                position = next
            }
        }
    }

    /// Forgets the frames before `frame` (played).
    public mutating func discard(before frame: Int64) {
        startFrame = min(max(startFrame, frame), endFrame)
    }

    /// Drops the frames from `frame` on (a flush).
    public mutating func truncate(from frame: Int64) {
        endFrame = max(min(endFrame, frame), startFrame)
    }

    /// Drops everything; the next write starts wherever it is.
    public mutating func removeAll() {
        startFrame = endFrame
    }

    private func ringIndex(_ frame: Int64) -> Int {
        let index = Int(frame % Int64(capacityFrames))
        return index < 0 ? index + capacityFrames : index
    }

    private mutating func fill(from frame: Int64, count: Int, with source: ArraySlice<Float>?) {
        var written = 0
        while written < count {
            let index = ringIndex(frame + Int64(written))
            let run = min(count - written, capacityFrames - index)
            let range = (index * channelCount)..<((index + run) * channelCount)
            if let source {
                let from = source.startIndex + written * channelCount
                samples.replaceSubrange(range, with: source[from..<(from + run * channelCount)])
            } else {
                samples.withUnsafeMutableBufferPointer { UnsafeMutableBufferPointer(rebasing: $0[range]).update(repeating: 0) }
            }
            written += run
        }
    }
}
