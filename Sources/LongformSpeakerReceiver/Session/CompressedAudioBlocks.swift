import LongformSpeakerProtocol

/// Audio held as the FLAC blocks it came in, by media frame, decoded only when read: minutes of
/// buffer cost what FLAC takes (a third to a half of 16-bit PCM), and a read decodes the few
/// blocks it covers. The blocks never overlap: before a block goes over held frames its owner
/// truncates there (`SpeakerBuffer`), and a truncation inside a block keeps the block but stops
/// it there. A value type whose decoding
/// state (the decoder, the blocks last decoded) is a shared reference, so that a read does not
/// mutate: its owner serialises access (the session's lock).
struct CompressedAudioBlocks: @unchecked Sendable {
    /// One block: the frames it gives (`firstFrame`, `frameCount`, fewer than it holds once cut),
    /// and a serial number, new for each block written, that names its decoded samples.
    private struct Block {
        var firstFrame: Int64
        var frameCount: Int
        let blockFrameCount: Int
        let payload: [UInt8]
        let serial: UInt64

        var endFrame: Int64 { firstFrame + Int64(frameCount) }
    }

    /// The decoder and what it decoded last.
    private final class Decoding {
        let decoder: FLACFrameDecoder
        /// The last blocks decoded, by serial, newest last: reads walk forward, with a filter's
        /// reach back into the block before, and a rewind reads a little again.
        var decoded: [(serial: UInt64, samples: [Float])] = []
        var scratch: [Int16] = []
        /// The first block that did not decode since the last look (`takeReadFailure`), and why.
        var failure: String?

        init(decoder: FLACFrameDecoder) { self.decoder = decoder }
    }

    /// Interleaved channels.
    let channelCount: Int
    private let decoding: Decoding
    /// Ascending, not overlapping; the frames between two blocks are silence.
    private var blocks: [Block] = []
    /// Blocks before this index are gone (dropped in batches, not one copy per block played).
    private var head = 0
    private var nextSerial: UInt64 = 0
    private static let decodedBlocksKept = 4

    /// No blocks, decoded by `decoder` (its format's channels and rate).
    init(decoder: FLACFrameDecoder) {
        decoding = Decoding(decoder: decoder)
        channelCount = decoder.channelCount
    }

    /// The bytes the blocks held take (walks them: for tests and logs).
    var payloadByteCount: Int { blocks[head...].reduce(0) { $0 + $1.payload.count } }

    /// The first block that did not decode since the last call, and why, if any (for the log).
    func takeReadFailure() -> String? {
        defer { decoding.failure = nil }
        return decoding.failure
    }

    /// Adds `payload`, a block of `frameCount` frames at `firstFrame`, after the blocks held
    /// (the caller has cut those from `firstFrame` on).
    mutating func append(_ payload: [UInt8], frameCount: Int, at firstFrame: Int64) {
        precondition(blocks.last.map { $0.endFrame <= firstFrame } ?? true, "a block over held frames")
        blocks.append(Block(firstFrame: firstFrame, frameCount: frameCount, blockFrameCount: frameCount, payload: payload, serial: nextSerial))
        nextSerial += 1
    }

    /// Forgets the frames from `frame` on.
    mutating func truncate(from frame: Int64) {
        while blocks.count > head, let last = blocks.last, last.firstFrame >= frame { blocks.removeLast() }
        if blocks.count > head, blocks[blocks.count - 1].endFrame > frame {
            blocks[blocks.count - 1].frameCount = Int(frame - blocks[blocks.count - 1].firstFrame)
        }
    }

    /// Forgets the blocks that end at or before `frame`.
    mutating func discard(before frame: Int64) {
        while head < blocks.count, blocks[head].endFrame <= frame { head += 1 }
        if head >= 64 && head * 2 >= blocks.count {
            blocks.removeFirst(head)
            head = 0
        }
    }

    /// Forgets every block.
    mutating func removeAll() {
        blocks.removeAll(keepingCapacity: true)
        head = 0
    }

    /// Appends `count` frames from `frame` to `output` (interleaved), decoding the blocks they lie
    /// in; silence where no block is. A block that does not decode reads as silence, and is kept
    /// for `takeReadFailure` (the read goes on).
    func read(from frame: Int64, count: Int, into output: inout [Float]) {
        var position = frame
        let end = frame + Int64(count)
        var index = firstBlockIndex(endingAfter: position)
        while position < end {
            guard index < blocks.count, blocks[index].firstFrame < end else {
                output.append(contentsOf: [Float](repeating: 0, count: Int(end - position) * channelCount))
                break
            }
            let block = blocks[index]
            if block.firstFrame > position {
                output.append(contentsOf: [Float](repeating: 0, count: Int(block.firstFrame - position) * channelCount))
                position = block.firstFrame
            }
            let run = Int(min(block.endFrame, end) - position)
            let offset = Int(position - block.firstFrame) * channelCount
            switch samples(of: block) {
            case .success(let samples): output.append(contentsOf: samples[offset..<(offset + run * channelCount)])
            case .failure(let error):
                decoding.failure = decoding.failure ?? "the block at frame \(block.firstFrame) (\(block.blockFrameCount) frames) did not decode: \(error)"
                output.append(contentsOf: [Float](repeating: 0, count: run * channelCount))
            }
            position += Int64(run)
            index += 1
        }
    }

    /// The index of the first block held that ends after `frame` (binary search).
    private func firstBlockIndex(endingAfter frame: Int64) -> Int {
        var (low, high) = (head, blocks.count)
        while low < high {
            let middle = (low + high) / 2
            if blocks[middle].endFrame <= frame { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// A block's samples, from the decoded ones kept or decoded now.
    private func samples(of block: Block) -> Result<[Float], FLACFrameError> {
        if let kept = decoding.decoded.first(where: { $0.serial == block.serial }) { return .success(kept.samples) }
        let sampleCount = block.blockFrameCount * channelCount
        if decoding.scratch.count != sampleCount { decoding.scratch = [Int16](repeating: 0, count: sampleCount) }
        do {
            try decoding.scratch.withUnsafeMutableBufferPointer { samples throws(FLACFrameError) in try decoding.decoder.decode(block.payload, into: samples) }
        } catch {
            return .failure(error)
        }
        let samples = decoding.scratch.map(AudioStreamFormat.Encoding.floatSample)
        if decoding.decoded.count >= Self.decodedBlocksKept { decoding.decoded.removeFirst() }
        decoding.decoded.append((block.serial, samples))
        return .success(samples)
    }
}
