import Foundation
import LongformSources
@testable import LongformSpeakerProtocol
import LongformTestSupport
import Testing

/// The speaker's own FLAC decoder against what FFmpeg's encoder made: every sample as it went in
/// (FLAC is lossless) and as FFmpeg's decoder gives it, for every kind of subframe the encoder
/// chooses; and a frame damaged anywhere, or cut short, is refused by name, never trapped on.
@Suite struct FLACFrameDecoderTests {
    /// Interleaved 16-bit test signals of `frames` frames and `channels` channels.
    enum Signal: CaseIterable {
        case silence, constant, sine, noise, loudSquare, music, identicalChannels, quietWithWastedBits

        func samples(frames: Int, channels: Int, seed: UInt64) -> [Int16] {
            var generator = SeededRandomGenerator(seed: seed)
            var samples: [Int16] = []
            samples.reserveCapacity(frames * channels)
            for frame in 0..<frames {
                let t = Double(frame) / 44_100
                for channel in 0..<channels {
                    let value: Double
                    switch self {
                    case .silence: value = 0
                    case .constant: value = channel == 0 ? -1_234 : 777
                    case .sine: value = 20_000 * sin(2 * .pi * (440 + 110 * Double(channel)) * t)
                    case .noise: value = Double(Int16.random(in: .min ... .max, using: &generator))
                    case .loudSquare: value = (frame / 50 + channel) % 2 == 0 ? 32_767 : -32_768
                    case .music:
                        value = 9_000 * sin(2 * .pi * 220 * t) + 6_000 * sin(2 * .pi * 1_760 * t + Double(channel))
                            + 3_000 * sin(2 * .pi * 7_040 * t) + Double(Int.random(in: -800...800, using: &generator))
                    case .identicalChannels: value = 15_000 * sin(2 * .pi * 330 * t) + Double(Int.random(in: -50...50, using: &generator))
                    case .quietWithWastedBits: value = Double(Int.random(in: -40...40, using: &generator) * 256)
                    }
                    samples.append(Int16(max(-32_768, min(32_767, value.rounded()))))
                }
            }
            if self == .identicalChannels, channels > 1 {
                for frame in 0..<frames { for channel in 1..<channels { samples[frame * channels + channel] = samples[frame * channels] } }
            }
            return samples
        }
    }

    /// Encodes `samples` with FFmpeg as the sender does, and checks that both decoders give them back.
    static func roundTrip(_ samples: [Int16], channels: Int, blockFrames: Int = 4_096, level: Int = 5, label: String) throws {
        let encoder = try FLACBlockEncoder(sampleRate: 44_100, channelCount: channels, blockFrameCount: blockFrames, compressionLevel: level)
        let ffmpeg = try FLACBlockDecoder(sampleRate: 44_100, channelCount: channels)
        let ours = try FLACFrameDecoder(sampleRate: 44_100, channelCount: channels)
        let frames = samples.count / channels
        var start = 0
        while start < frames {
            let count = min(blockFrames, frames - start)
            let block = Array(samples[(start * channels)..<((start + count) * channels)])
            let frame = try encoder.encode(block)
            let decoded = try ours.decode(frame, frameCount: count)
            #expect(decoded == block, "\(label): block at \(start) of \(count) frames (\(frame.count) bytes) decoded differently")
            #expect(decoded == (try ffmpeg.decode(frame, frameCount: count)), "\(label): ours and FFmpeg's differ at \(start)")
            start += count
        }
    }

    @Test(arguments: [0, 5, 8, 12])
    func everySignalComesBackAsItWentInAtEveryCompressionLevel(level: Int) throws {
        for signal in Signal.allCases {
            for channels in [1, 2, 6] {
                let samples = signal.samples(frames: 3 * 4_096 + 1_000, channels: channels, seed: UInt64(level * 10 + channels))
                try Self.roundTrip(samples, channels: channels, level: level, label: "\(signal), \(channels) channels, level \(level)")
            }
        }
    }

    @Test func shortBlocksAndOddSizesComeBack() throws {
        // A flush's short block, and block sizes the header codes in each of its ways.
        for blockFrames in [16, 192, 576, 1_152, 4_096, 4_608, 8_192, 65_535] {
            let samples = Signal.music.samples(frames: blockFrames + 17, channels: 2, seed: UInt64(blockFrames))
            try Self.roundTrip(samples, channels: 2, blockFrames: blockFrames, label: "blocks of \(blockFrames)")
        }
        let encoder = try FLACBlockEncoder(sampleRate: 44_100, channelCount: 2)
        for count in [1, 2, 15, 100, 4_095] {
            let block = Signal.noise.samples(frames: count, channels: 2, seed: UInt64(count))
            let frame = try encoder.encode(block)
            #expect(try FLACFrameDecoder(sampleRate: 44_100, channelCount: 2).decode(frame, frameCount: count) == block, "\(count) frames")
        }
    }

    @Test func aFrameDamagedAnywhereOrCutShortIsRefusedByName() throws {
        let encoder = try FLACBlockEncoder(sampleRate: 44_100, channelCount: 2)
        let decoder = try FLACFrameDecoder(sampleRate: 44_100, channelCount: 2)
        let block = Signal.music.samples(frames: 300, channels: 2, seed: 9)
        let frame = try encoder.encode(block)
        // Every single bit flipped (the CRC-16 catches each; most are caught before it).
        for bit in 0..<(frame.count * 8) {
            var damaged = frame
            damaged[bit / 8] ^= 0x80 >> UInt8(bit % 8)
            #expect(throws: FLACFrameError.self, "bit \(bit) flipped") { _ = try decoder.decode(damaged, frameCount: 300) }
        }
        // Every length short of the whole, and a byte more.
        for length in 0..<frame.count {
            #expect(throws: FLACFrameError.self, "cut to \(length) bytes") { _ = try decoder.decode(Array(frame.prefix(length)), frameCount: 300) }
        }
        #expect(throws: FLACFrameError.self) { _ = try decoder.decode(frame + [0], frameCount: 300) }
        // Another format's frame: its frame count, its channels, its rate.
        #expect(throws: FLACFrameError.self) { _ = try decoder.decode(frame, frameCount: 299) }
        #expect(throws: FLACFrameError.self) { _ = try FLACFrameDecoder(sampleRate: 44_100, channelCount: 1).decode(frame, frameCount: 600) }
        #expect(throws: FLACFrameError.self) { _ = try FLACFrameDecoder(sampleRate: 48_000, channelCount: 2).decode(frame, frameCount: 300) }
        do {
            _ = try decoder.decode(Array(frame.prefix(10)), frameCount: 300)
        } catch {
            #expect(error.description.contains("ends") || error.description.contains("CRC"), "\(error)")
        }
    }

    @Test func randomBytesNeverTrap() throws {
        // Hostile payloads: random bytes behind a valid sync and header start, and whole frames
        // whose residual bytes are scrambled with their CRCs recomputed (reaching the residual
        // and prediction code with values no encoder makes).
        var generator = SeededRandomGenerator(seed: 42)
        let decoder = try FLACFrameDecoder(sampleRate: 44_100, channelCount: 2)
        let encoder = try FLACBlockEncoder(sampleRate: 44_100, channelCount: 2)
        let frame = try encoder.encode(Signal.music.samples(frames: 512, channels: 2, seed: 3))
        var refused = (random: 0, scrambled: 0)
        for round in 0..<2_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = [0xFF, 0xF8] + (0..<Int.random(in: 0...600, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                bytes = frame
                for _ in 0..<Int.random(in: 1...20, using: &generator) {
                    bytes[Int.random(in: 8..<(bytes.count - 2), using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
                let crc = bytes.withUnsafeBytes { FLACChecksum.crc16(UnsafeRawBufferPointer(rebasing: $0[0..<(bytes.count - 2)])) }
                bytes[bytes.count - 2] = UInt8(crc >> 8)
                bytes[bytes.count - 1] = UInt8(crc & 0xFF)
            }
            do { _ = try decoder.decode(bytes, frameCount: 512) } catch {
                if round % 2 == 0 { refused.random += 1 } else { refused.scrambled += 1 }
            }
        }
        // Random bytes never make a frame (the CRCs); a scrambled frame may still decode to
        // other 16-bit samples (its CRC was made to match), but most do not.
        #expect(refused.random == 1_000)
        #expect(refused.scrambled >= 500, "\(refused.scrambled) of 1,000 scrambled frames refused")
    }

    @Test func theChecksumsAreFLACs() {
        // RFC 9639's CRC-8 and CRC-16 of "123456789" (their check values).
        let digits = Array("123456789".utf8)
        digits.withUnsafeBytes { bytes in
            #expect(FLACChecksum.crc8(bytes) == 0xF4)
            #expect(FLACChecksum.crc16(bytes) == 0xFEE8)
        }
    }
}
