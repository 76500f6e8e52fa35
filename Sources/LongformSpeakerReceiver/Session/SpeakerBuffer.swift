import LongformSpeakerProtocol

/// The audio a speaker holds, by media frame: the frames `startFrame..<endFrame`, at most
/// `capacityFrames`, held as a ring of interleaved Float32 (a PCM stream) or as the FLAC blocks
/// they came in (`CompressedAudioBlocks`, decoded as they are read). Minutes of audio, written
/// ahead by the sender, read by the output, dropped once played. A value type with no locks:
/// its owner serialises access.
public struct SpeakerBuffer: Sendable {
    /// Interleaved channels.
    public let channelCount: Int
    /// The most frames it holds.
    public let capacityFrames: Int
    /// The first frame held.
    public private(set) var startFrame: Int64 = 0
    /// One past the last frame held (`startFrame` when empty).
    public private(set) var endFrame: Int64 = 0
    /// The ring of a PCM stream (empty for a compressed one).
    private var samples: [Float]
    /// The blocks of a compressed stream (nil for a PCM one).
    private var blocks: CompressedAudioBlocks?

    /// An empty buffer of `capacityFrames` frames of PCM.
    public init(channelCount: Int, capacityFrames: Int) {
        self.channelCount = max(channelCount, 1)
        self.capacityFrames = max(capacityFrames, 1)
        samples = [Float](repeating: 0, count: self.capacityFrames * self.channelCount)
    }

    /// An empty buffer of `capacityFrames` frames held as the FLAC blocks `decoder` decodes.
    public init(capacityFrames: Int, decoder: FLACFrameDecoder) {
        channelCount = decoder.channelCount
        self.capacityFrames = max(capacityFrames, 1)
        samples = []
        blocks = CompressedAudioBlocks(decoder: decoder)
    }

    /// Whether it holds compressed blocks (written with `write(block:frameCount:at:)`).
    public var isCompressed: Bool { blocks != nil }
    /// The bytes the audio held takes: the ring's, or the blocks' (walks them: for tests and logs).
    public var heldByteCount: Int { blocks?.payloadByteCount ?? samples.count * MemoryLayout<Float>.size }
    /// The first block that did not decode since the last call, and why (for the log).
    public func takeReadFailure() -> String? { blocks?.takeReadFailure() }

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
        precondition(blocks == nil, "PCM written to a buffer of compressed blocks")
        let count = frames.count / channelCount
        guard count > 0 else { return 0 }
        place(at: firstFrame)
        let stored = min(count, room)
        fill(from: endFrame, count: stored, with: frames.prefix(stored * channelCount))
        endFrame += Int64(stored)
        return stored
    }

    /// Stores a compressed block of `frameCount` frames from `firstFrame`, as `write(_:at:)`
    /// stores frames; returns how many were stored: all, or none when they do not fit.
    @discardableResult
    public mutating func write(block payload: [UInt8], frameCount: Int, at firstFrame: Int64) -> Int {
        precondition(blocks != nil, "a compressed block written to a PCM buffer")
        guard frameCount > 0 else { return 0 }
        place(at: firstFrame)
        guard frameCount <= room else { return 0 }
        blocks!.append(payload, frameCount: frameCount, at: endFrame)
        endFrame += Int64(frameCount)
        return frameCount
    }

    /// Moves the end to `firstFrame`, where a write goes: starting again there when nothing held
    /// leads to it (empty, before the start, or a gap longer than the room, such as the frames a
    /// long pause skipped, which are never played); cutting what is held from there; or leaving
    /// silence up to it.
    private mutating func place(at firstFrame: Int64) {
        if isEmpty || firstFrame < startFrame || firstFrame - endFrame > Int64(room) {
            blocks?.removeAll()
            startFrame = firstFrame
            endFrame = firstFrame
        } else if firstFrame < endFrame {
            truncate(from: firstFrame)
        } else if firstFrame > endFrame {
            // A compressed buffer reads silence where it has no block.
            if blocks == nil { fill(from: endFrame, count: Int(firstFrame - endFrame), with: nil) }
            endFrame = firstFrame
        }
    }

    /// Copies `count` frames from `frame` into `output` (interleaved); silence where nothing is held.
    /// Silence is never `repeatElement`'s: a debug build copies that one element at a time.
    public func read(from frame: Int64, count: Int, into output: inout [Float]) {
        output.removeAll(keepingCapacity: true)
        output.reserveCapacity(count * channelCount)
        if let blocks {
            // Only the frames held: a block cut by a discard or a truncation holds others.
            let end = frame + Int64(count)
            let first = min(max(frame, startFrame), end), last = max(min(end, endFrame), first)
            output.append(contentsOf: [Float](repeating: 0, count: Int(first - frame) * channelCount))
            blocks.read(from: first, count: Int(last - first), into: &output)
            output.append(contentsOf: [Float](repeating: 0, count: Int(end - last) * channelCount))
            return
        }
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
        blocks?.discard(before: startFrame)
    }

    /// Drops the frames from `frame` on (a flush).
    public mutating func truncate(from frame: Int64) {
        endFrame = max(min(endFrame, frame), startFrame)
        blocks?.truncate(from: endFrame)
    }

    /// Drops everything; the next write starts wherever it is.
    public mutating func removeAll() {
        startFrame = endFrame
        blocks?.removeAll()
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
