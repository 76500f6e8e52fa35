import LongformSources
import LongformSpeakerProtocol

/// Turns rendered Float32 frames into an audio message's payload in the stream's encoding: PCM
/// sample by sample, FLAC one block (one FLAC frame that decodes on its own) per message. Keeps
/// the FLAC blocks of whole messages on the group's grid (`blockFrameCount`), so that each is
/// encoded once for every speaker; the feed forgets those its history no longer holds as it is.
/// Not thread-safe: the feed uses it under its lock.
final class AudioPayloadEncoder {
    /// The stream's format on the wire.
    let format: AudioStreamFormat
    /// Frames per FLAC block, and per audio message.
    let blockFrameCount: Int
    private let flac: FLACBlockEncoder?
    /// Encoded whole blocks by first frame (a multiple of `blockFrameCount`).
    private var blocks: [Int64: [UInt8]] = [:]
    private var scratch: [Int16] = []

    /// An encoder for `format`, messages of up to `blockFrameCount` frames; throws when FLAC is
    /// asked for and cannot be had.
    init(format: AudioStreamFormat, blockFrameCount: Int) throws(FLACCodecError) {
        self.format = format
        self.blockFrameCount = blockFrameCount
        flac = format.encoding.isCompressed
            ? try FLACBlockEncoder(sampleRate: Int(format.sampleRate), channelCount: Int(format.channelCount), blockFrameCount: blockFrameCount)
            : nil
    }

    /// How many frames the message that starts at `frame` may carry: a block's, and for FLAC no
    /// further than the next block boundary, so that every speaker is sent the same blocks.
    func messageFrameLimit(at frame: Int64) -> Int {
        guard flac != nil else { return blockFrameCount }
        return blockFrameCount - Int(frame - blockBoundary(atOrBefore: frame))
    }

    /// The first frame of the grid's block that holds `frame` (a multiple of `blockFrameCount`).
    func blockBoundary(atOrBefore frame: Int64) -> Int64 {
        let block = Int64(blockFrameCount)
        return frame - ((frame % block) + block) % block
    }

    /// The payload of `samples`, the frames from `frame` on (at most `messageFrameLimit(at:)`).
    func payload(for samples: ArraySlice<Float>, at frame: Int64) throws(FLACCodecError) -> [UInt8] {
        guard let flac else { return format.encoding.encode(samples) }
        let isWholeBlock = samples.count == blockFrameCount * Int(format.channelCount)
        if isWholeBlock, let block = blocks[frame] { return block }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: samples.lazy.map(AudioStreamFormat.Encoding.signed16Sample))
        let block = try flac.encode(scratch)
        if isWholeBlock { blocks[frame] = block }
        return block
    }

    /// Forgets every block (the history was replaced).
    func forgetAllBlocks() {
        blocks.removeAll()
    }

    /// Forgets the blocks that reach `frame` or past it (the history from there changed).
    func forgetBlocks(from frame: Int64) {
        blocks = blocks.filter { $0.key + Int64(blockFrameCount) <= frame }
    }

    /// Forgets the blocks that start before `frame` (the history no longer holds them).
    func forgetBlocks(before frame: Int64) {
        blocks = blocks.filter { $0.key >= frame }
    }

    /// How many whole blocks are kept (for tests).
    var keptBlockCount: Int { blocks.count }
}
