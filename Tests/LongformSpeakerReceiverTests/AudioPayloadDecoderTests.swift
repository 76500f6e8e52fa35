import Foundation
import LongformSources
import LongformSpeakerProtocol
import LongformSpeakerReceiver
import Testing

/// A speaker's audio payloads: FLAC blocks decode to exactly their 16-bit samples, and a damaged
/// or mislabelled block is refused with its reason while the next decodes as before.
@Suite struct AudioPayloadDecoderTests {
    private static let format = AudioStreamFormat(sampleRate: 44_100, channelCount: 2, encoding: .flac)

    /// A 16-bit stereo block of `frameCount` frames: a sweep on the left, noise on the right.
    private static func block(frameCount: Int, seed: UInt64) -> [Int16] {
        var generator = seed
        return (0..<frameCount).flatMap { index -> [Int16] in
            generator = generator &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let phase = Double(index * index) / Double(frameCount) * 0.05
            return [Int16(12_000 * sin(phase)), Int16(truncatingIfNeeded: Int64(generator >> 52) - 2_048)]
        }
    }

    @Test func flacBlocksDecodeToTheirSamplesAndABadOneIsRefusedWithoutHarmingTheNext() throws {
        let encoder = try FLACBlockEncoder(sampleRate: 44_100, channelCount: 2)
        let decoder = AudioPayloadDecoder()
        let full = Self.block(frameCount: 4_096, seed: 1), short = Self.block(frameCount: 1_000, seed: 2)
        let (fullPayload, shortPayload) = (try encoder.encode(full), try encoder.encode(short))
        for (samples, payload) in [(full, fullPayload), (short, shortPayload)] {
            let decoded = try decoder.decode(frameCount: UInt32(samples.count / 2), payload: payload, format: Self.format).get()
            #expect(decoded == samples.map(AudioStreamFormat.Encoding.floatSample), "\(samples.count / 2) frames")
        }
        var damaged = fullPayload
        damaged[damaged.count / 2] ^= 0x10
        let refusals = [
            (damaged, 4_096, "a flipped byte"),
            (fullPayload, 4_000, "the wrong frame count"),
            (Array(fullPayload.prefix(100)), 4_096, "a block cut short"),
        ]
        for (payload, frameCount, what) in refusals {
            guard case .failure(let refusal) = decoder.decode(frameCount: UInt32(frameCount), payload: payload, format: Self.format) else {
                Issue.record("\(what) was taken"); continue
            }
            #expect(refusal.reason.contains("audio of \(frameCount) frames") && refusal.reason.contains("FLAC"), "\(what): \(refusal.reason)")
            let next = try decoder.decode(frameCount: 1_000, payload: shortPayload, format: Self.format).get()
            #expect(next == short.map(AudioStreamFormat.Encoding.floatSample), "after \(what)")
        }
        guard case .failure(let early) = decoder.decode(frameCount: 4_096, payload: fullPayload, format: nil) else { Issue.record("audio before a format was taken"); return }
        #expect(early.reason == "audio before a format")
    }
}
