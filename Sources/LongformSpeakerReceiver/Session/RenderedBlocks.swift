import LongformSpeakerProtocol

/// Where a block goes in an output that can take back what it holds and has not played (a
/// rewindable route): the output frame of the block's first frame, and the first frame the
/// output can still change now.
public struct OutputPlacement: Sendable, Equatable {
    /// The output frame of the block's first frame.
    public var frame: Int64
    /// The first output frame the output can still take back.
    public var firstChangeableFrame: Int64

    /// A placement.
    public init(frame: Int64, firstChangeableFrame: Int64) {
        self.frame = frame
        self.firstChangeableFrame = firstChangeableFrame
    }
}

/// What a rewindable output holds and has not played, block by block, with the session's state
/// at each block's start: so that a change (an anchor, a flush, a volume, audio that came late)
/// is heard from the first frame the output can still change, not after everything it holds (a
/// PulseAudio output holds seconds). A value type; the session owns it.
struct RenderedBlocks: Sendable {
    /// One rendered block and the session's state at its start.
    struct Block: Sendable {
        /// The output frame of its first frame.
        var outputFrame: Int64
        /// Its length in output frames.
        var frameCount: Int
        /// When its first frame is heard, on the speaker's clock (ns).
        var heardAt: UInt64
        /// The anchor it followed.
        var anchor: RateAnchor?
        /// The session's read position before it and after it.
        var positionBefore: Double?
        var positionAfter: Double?
        /// The anchors whose timelines those positions follow (see `SpeakerSession.positionAnchor`).
        var positionAnchorBefore: RateAnchor?
        var positionAnchorAfter: RateAnchor?
        /// Where it read the buffer from, after how many frames of silence, at which step (nil: it read nothing).
        var readFrom: Double?
        var silentFrames: Int
        var step: Double
        /// The drift controller's state before it.
        var drift: DriftCorrector

        /// One past its last output frame.
        var endFrame: Int64 { outputFrame + Int64(frameCount) }

        /// The read position at output frame `frame`, which lies within the block.
        func position(atOutputFrame frame: Int64) -> Double? {
            guard let readFrom else { return positionAfter }
            let into = Int(frame - outputFrame)
            if into < silentFrames { return positionBefore }
            return readFrom + Double(into - silentFrames) * step
        }

        /// The anchor the read position at output frame `frame` (within the block) follows: as
        /// `position(atOutputFrame:)` picks the position before or after.
        func positionAnchor(atOutputFrame frame: Int64) -> RateAnchor? {
            guard readFrom != nil else { return positionAnchorAfter }
            return Int(frame - outputFrame) < silentFrames ? positionAnchorBefore : positionAnchorAfter
        }

        /// The first of its output frames that played media frame `media` or a later one.
        func outputFrame(ofMedia media: Int64) -> Int64? {
            guard let readFrom else { return nil }
            guard Double(media) < readFrom + Double(frameCount - silentFrames) * step else { return nil }
            let into = Int64(max(0, (Double(media) - readFrom) / step).rounded(.up))
            return outputFrame + Int64(silentFrames) + into
        }
    }

    /// The blocks, in output order, none of them wholly played.
    private(set) var blocks: [Block] = []

    /// One past the last output frame rendered, or nil when nothing is kept.
    var endFrame: Int64? { blocks.last?.endFrame }

    /// The earliest buffer frame a block still reads: what the buffer must keep.
    var earliestReadFrame: Double? { blocks.compactMap { $0.readFrom ?? $0.positionBefore }.min() }

    /// Adds the block just rendered.
    mutating func append(_ block: Block) {
        blocks.append(block)
    }

    /// Forgets the blocks that end at or before `frame`: the output can no longer change them.
    mutating func forget(before frame: Int64) {
        blocks.removeAll { $0.endFrame <= frame }
    }

    /// Forgets everything (a new session or format).
    mutating func removeAll() {
        blocks.removeAll()
    }

    /// The output renders again from `frame`: drops what was rendered from there on and returns
    /// the first block dropped in whole or part (the session's state at `frame` is in it), or
    /// nil when nothing was rendered from there.
    mutating func cut(at frame: Int64) -> Block? {
        guard let index = blocks.firstIndex(where: { $0.endFrame > frame }) else { return nil }
        let block = blocks[index]
        blocks.removeSubrange(index...)
        if frame > block.outputFrame {
            var kept = block
            kept.frameCount = Int(frame - block.outputFrame)
            kept.positionAfter = block.position(atOutputFrame: frame)
            blocks.append(kept)
        }
        return block
    }

    /// The first output frame that played media frame `media` or a later one, or nil if none has.
    func outputFrame(ofMedia media: Int64) -> Int64? {
        blocks.lazy.compactMap { $0.outputFrame(ofMedia: media) }.first
    }

    /// The output frame heard at `localTime` (ns on the speaker's clock) by an output that plays a
    /// frame in `frameDuration` ns, or nil when that is past what was rendered; the first block's
    /// frame for a time before it.
    func outputFrame(heardAt localTime: UInt64, frameDuration: Double) -> Int64? {
        for block in blocks {
            let duration = UInt64((Double(block.frameCount) * frameDuration).rounded())
            guard localTime < block.heardAt + duration else { continue }
            guard localTime > block.heardAt else { return block.outputFrame }
            return block.outputFrame + Int64((Double(localTime - block.heardAt) / frameDuration).rounded(.down))
        }
        return nil
    }

    /// The first media position the output plays from output frame `frame` on: the read position
    /// there or, where it holds silence with no position (before a start), where the next block
    /// that reads begins; nil when no kept block from there has either.
    func firstPosition(fromOutputFrame frame: Int64) -> Double? {
        for block in blocks where block.endFrame > frame {
            if block.outputFrame <= frame, let position = block.position(atOutputFrame: frame) { return position }
            if let readFrom = block.readFrom { return readFrom }
        }
        return nil
    }
}
