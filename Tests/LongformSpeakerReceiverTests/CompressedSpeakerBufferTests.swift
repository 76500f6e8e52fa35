import Foundation
import LongformSources
import LongformSpeakerProtocol
import LongformSpeakerReceiver
import Testing

/// A speaker's buffer of FLAC blocks: every read gives what a PCM buffer of the same 16-bit
/// samples gives, through writes, gaps, resends, flushes inside a block and discards; a block
/// that does not decode reads as silence and is named; and it takes FLAC's bytes, not PCM's.
@Suite struct CompressedSpeakerBufferTests {
    private static let blockFrames = 4_096

    /// Stereo 16-bit frames `first..<first + count` of a chord over noise; `take` picks another.
    private static func music(from first: Int64, count: Int, take: Int = 0) -> [Int16] {
        (0..<count).flatMap { index -> [Int16] in
            let frame = first + Int64(index)
            let time = Double(frame) / 44_100
            var noise = UInt64(frame) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(take)
            noise ^= noise >> 29
            let hiss = Double(Int64(noise & 0x3FF) - 512)
            let left = 9_000 * sin(2 * .pi * (220 + 30 * Double(take)) * time) + 5_000 * sin(2 * .pi * 331 * time) + hiss
            let right = 8_000 * sin(2 * .pi * 277 * time) + 6_000 * sin(2 * .pi * (440 + 20 * Double(take)) * time) + hiss
            return [Int16(left), Int16(right)]
        }
    }

    /// The same audio written to a PCM buffer and, as FLAC blocks on the 4,096-frame grid, to a compressed one.
    private struct Pair {
        var pcm = SpeakerBuffer(channelCount: 2, capacityFrames: 3_000_000)
        var compressed: SpeakerBuffer
        let encoder: FLACBlockEncoder

        init() throws {
            compressed = SpeakerBuffer(capacityFrames: 3_000_000, decoder: try FLACFrameDecoder(sampleRate: 44_100, channelCount: 2))
            encoder = try FLACBlockEncoder(sampleRate: 44_100, channelCount: 2)
        }

        /// Writes `count` frames from `first` (of `take`'s music) as the sender sends them.
        mutating func write(from first: Int64, count: Int, take: Int = 0) throws {
            var frame = first
            while frame < first + Int64(count) {
                let length = min(CompressedSpeakerBufferTests.blockFrames - Int(frame % Int64(CompressedSpeakerBufferTests.blockFrames)),
                                 Int(first + Int64(count) - frame))
                let samples = CompressedSpeakerBufferTests.music(from: frame, count: length, take: take)
                #expect(pcm.write(samples.map(AudioStreamFormat.Encoding.floatSample)[...], at: frame) == length)
                #expect(compressed.write(block: try encoder.encode(samples), frameCount: length, at: frame) == length)
                frame += Int64(length)
            }
        }

        /// Whether both read alike from `frame`, `count` frames.
        func readAlike(from frame: Int64, count: Int) -> Bool {
            var (expected, read): ([Float], [Float]) = ([], [])
            pcm.read(from: frame, count: count, into: &expected)
            compressed.read(from: frame, count: count, into: &read)
            return expected == read && pcm.startFrame == compressed.startFrame && pcm.endFrame == compressed.endFrame
        }
    }

    @Test func everyReadGivesWhatAPCMBufferOfTheSameSamplesGives() throws {
        var pair = try Pair()
        var random = SystemRandomNumberGenerator()
        func readsAlike(_ what: String) {
            for _ in 0..<40 {
                let from = Int64.random(in: (pair.pcm.startFrame - 5_000)...(pair.pcm.endFrame + 100), using: &random)
                let count = Int.random(in: 1...20_000, using: &random)
                #expect(pair.readAlike(from: from, count: count), "\(what): \(count) frames from \(from)")
            }
        }
        try pair.write(from: 1_000, count: 40_000)
        readsAlike("written off the grid")
        // A flush inside a block, then other music from there: the block before is cut, not replaced.
        pair.pcm.truncate(from: 10_000)
        pair.compressed.truncate(from: 10_000)
        try pair.write(from: 10_000, count: 20_000, take: 1)
        readsAlike("after a flush inside a block")
        // A resend over held frames (a refused flush's audio, sent again), another take.
        try pair.write(from: 22_000, count: 9_000, take: 2)
        readsAlike("after a resend")
        // A gap (a paused span never sent), then played frames discarded.
        try pair.write(from: 40_000, count: 8_000, take: 3)
        pair.pcm.discard(before: 12_345)
        pair.compressed.discard(before: 12_345)
        readsAlike("after a gap and a discard")
        pair.pcm.removeAll()
        pair.compressed.removeAll()
        try pair.write(from: 500_000, count: 5_000)
        readsAlike("after emptying")
    }

    @Test func aBlockThatDoesNotDecodeReadsAsSilenceAndIsNamed() throws {
        var buffer = SpeakerBuffer(capacityFrames: 100_000, decoder: try FLACFrameDecoder(sampleRate: 44_100, channelCount: 2))
        let encoder = try FLACBlockEncoder(sampleRate: 44_100, channelCount: 2)
        let blocks = try (0..<3).map { try encoder.encode(Self.music(from: Int64($0 * Self.blockFrames), count: Self.blockFrames)) }
        var damaged = blocks[1]
        damaged[damaged.count / 2] ^= 0x20
        for (index, block) in [blocks[0], damaged, blocks[2]].enumerated() {
            buffer.write(block: block, frameCount: Self.blockFrames, at: Int64(index * Self.blockFrames))
        }
        var read: [Float] = []
        buffer.read(from: 0, count: 3 * Self.blockFrames, into: &read)
        let expected = Self.music(from: 0, count: 3 * Self.blockFrames).map(AudioStreamFormat.Encoding.floatSample)
        let block = Self.blockFrames * 2
        #expect(read[..<block] == expected[..<block] && read[(2 * block)...] == expected[(2 * block)...], "the blocks around it")
        #expect(read[block..<(2 * block)].allSatisfy { $0 == 0 }, "the damaged block is silence, never wrong samples")
        let failure = try #require(buffer.takeReadFailure())
        #expect(failure.contains("the block at frame 4096 (4096 frames) did not decode"), "\(failure)")
        #expect(buffer.takeReadFailure() == nil, "told once")
    }

    @Test func aMinuteTakesFLACsBytesNotPCMs() throws {
        var pair = try Pair()
        try pair.write(from: 0, count: 60 * 44_100)
        let pcm16 = 60 * 44_100 * 4
        #expect(pair.compressed.heldByteCount * 10 < pcm16 * 6, "\(pair.compressed.heldByteCount) bytes, 16-bit PCM \(pcm16)")
    }

    @Test func aSessionTakesOnlyFLACFramesInAFLACStream() {
        var session = SpeakerSession(configuration: .init(name: "test"))
        _ = session.receive(.hello(sessionID: Array(repeating: 1, count: 16), senderName: "s", timingPort: 1))
        _ = session.receive(.format(AudioStreamFormat(sampleRate: 44_100, channelCount: 2, encoding: .flac)))
        #expect(session.buffer?.isCompressed == true)
        let actions = session.receive(.audio(firstFrame: 0, frameCount: 2, samples: [0x34, 0x12, 0, 0, 1, 2, 3, 4]))
        #expect(actions == [.close(reason: "audio of 2 frames from 0 is not a FLAC frame (8 bytes)")])
        #expect(session.buffer?.isEmpty == true)
    }

    @Test func aBlockSaidToHoldMoreThanAFLACFrameCanIsRefused() throws {
        // A hostile sender's block of a few bytes said to hold four billion frames: its read would
        // have made room for 16 GB of samples.
        var session = SpeakerSession(configuration: .init(name: "test"))
        _ = session.receive(.hello(sessionID: Array(repeating: 1, count: 16), senderName: "s", timingPort: 1))
        _ = session.receive(.format(AudioStreamFormat(sampleRate: 44_100, channelCount: 2, encoding: .flac)))
        let frame = try FLACBlockEncoder(sampleRate: 44_100, channelCount: 2).encode(Self.music(from: 0, count: 100))
        let actions = session.receive(.audio(firstFrame: 0, frameCount: 4_000_000_000, samples: frame))
        #expect(actions == [.close(reason: "a FLAC block said to hold 4000000000 frames, from 0 (at most 65535)")])
        #expect(session.buffer?.isEmpty == true)
        #expect(session.receive(.audio(firstFrame: 0, frameCount: 100, samples: frame)).allSatisfy { if case .close = $0 { false } else { true } })
        #expect(session.buffer?.isEmpty == false)
    }
}
