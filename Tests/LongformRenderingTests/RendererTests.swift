import Dispatch
import Foundation
import LongformCore
import LongformRendering
import LongformRoutes
import LongformTestSupport
import Synchronization
import Testing

/// The renderer's data requests, conversion and look-ahead.
@Suite struct RendererTests {
    typealias H = RenderingHarness

    @Test func onlyTheLastRequestCountsAndItIsCalledAgainWhileReady() throws {
        let (renderer, synchronizer, _) = try H.fastRenderer("requests.wav", lookAhead: 3)
        let calls = Mutex<[String: Int]>([:])
        let queue = DispatchQueue(label: "test.requests")
        let filled = DispatchSemaphore(value: 0)
        // Held while the request is replaced, so that the first one cannot have run yet.
        queue.suspend()
        renderer.requestMediaDataWhenReady(on: queue) { calls.withLock { $0["first", default: 0] += 1 } }
        let position = Mutex(0)
        renderer.requestMediaDataWhenReady(on: queue) {
            calls.withLock { $0["last", default: 0] += 1 }
            // One small buffer per call, so that the renderer must call again while still ready.
            let start = position.withLock { start in defer { start += 4_410 }; return start }
            renderer.enqueue(H.constant(0.1, frames: 4_410, at: Double(start) / 44_100))
            if !renderer.isReadyForMoreMediaData { filled.signal() }
        }
        queue.resume()
        #expect(filled.wait(timeout: .now() + 5) == .success)
        queue.sync {}
        let counts = calls.withLock { $0 }
        #expect(counts["first"] == nil, "a replaced request was called")
        #expect(counts["last"] == 30, "3 s of look-ahead in 0.1 s buffers takes 30 calls, got \(counts["last"] ?? 0)")
        #expect(!renderer.isReadyForMoreMediaData)
        renderer.stopRequestingMediaData()
        synchronizer.removeRenderer(renderer, at: .invalid)
    }

    @Test func theLookAheadBoundsWhatIsEnqueued() throws {
        let (renderer, synchronizer, _) = try H.fastRenderer("lookahead.wav", lookAhead: 300)
        #expect(renderer.lookAheadDuration == 300)
        var seconds = 0
        while renderer.isReadyForMoreMediaData {
            renderer.enqueue(H.constant(0.1, frames: 44_100, at: Double(seconds)))
            seconds += 1
        }
        #expect(seconds == 300)
        #expect(renderer.queuedByteCount == 300 * 44_100 * 2 * 4)
        #expect(renderer.hasSufficientMediaDataForReliablePlaybackStart)
        synchronizer.removeRenderer(renderer, at: .invalid)
    }

    @Test func afterASeekBackTheLookAheadCountsFromTheNewPlayhead() throws {
        let (renderer, synchronizer, _) = try H.fastRenderer("lookahead-seek.wav", lookAhead: 2)
        for second in 0..<6 { renderer.enqueue(H.constant(0.1, frames: 44_100, at: Double(second))) }
        H.play(synchronizer, from: .zero, until: MediaTime(value: 5, timescale: 1))
        // Back to 1 s: the client flushes and enqueues from there; 2 s ahead is enough again.
        synchronizer.setRate(0, time: MediaTime(value: 1, timescale: 1))
        renderer.flush()
        #expect(renderer.isReadyForMoreMediaData)
        renderer.enqueue(H.constant(0.2, frames: 44_100, at: 1))
        renderer.enqueue(H.constant(0.2, frames: 44_100, at: 2))
        #expect(!renderer.isReadyForMoreMediaData, "2 s ahead of the new playhead is the whole look-ahead")
        synchronizer.removeRenderer(renderer, at: .invalid)
    }

    @Test func mixedRatesChannelCountsAndSampleFormatsPlayBackToBack() throws {
        let (renderer, synchronizer, route) = try H.fastRenderer("mixed-formats.wav")
        // 1 s of 16-bit interleaved stereo at 44.1 kHz: 0.25.
        let int16 = [Int16](repeating: 8192, count: 44_100 * 2)
        renderer.enqueue(SampleBuffer(pcmFormat: AudioFormat(sampleRate: 44_100, channelCount: 2, sampleFormat: .int16), planes: [H.bytes(int16)],
                                      frameCount: 44_100, presentationTime: .zero))
        // 1 s of planar float stereo at 48 kHz: left 0.5, right -0.5.
        var planar = SampleBuffer(pcmFormat: AudioFormat(sampleRate: 48_000, channelCount: 2, sampleFormat: .float32, isInterleaved: false),
                                  planes: [H.bytes([Float](repeating: 0.5, count: 48_000)), H.bytes([Float](repeating: -0.5, count: 48_000))],
                                  frameCount: 48_000, presentationTime: MediaTime(value: 1, timescale: 1))
        planar.outputPresentationTime = MediaTime(value: 1, timescale: 1)
        renderer.enqueue(planar)
        // 0.5 s of 24-bit mono in 32-bit integers at 44.1 kHz: 0.125 in both channels.
        let int32 = [Int32](repeating: Int32(1 << 28), count: 22_050)
        renderer.enqueue(SampleBuffer(pcmFormat: AudioFormat(sampleRate: 44_100, channelCount: 1, sampleFormat: .int32, bitsPerSample: 24),
                                      planes: [H.bytes(int32)], frameCount: 22_050, presentationTime: MediaTime(value: 2, timescale: 1)))
        // 0.5 s of 5.1 float64 at 22.05 kHz, front left and right only: 0.8 × the fold-down weight.
        var surround = [Double](repeating: 0, count: 11_025 * 6)
        for frame in 0..<11_025 { surround[frame * 6] = 0.8; surround[frame * 6 + 1] = 0.8 }
        renderer.enqueue(SampleBuffer(pcmFormat: AudioFormat(sampleRate: 22_050, channelCount: 6, sampleFormat: .float64), planes: [H.bytes(surround)],
                                      frameCount: 11_025, presentationTime: MediaTime(value: 5, timescale: 2)))
        renderer.stopRequestingMediaData()
        H.play(synchronizer, from: .zero, until: MediaTime(value: 3, timescale: 1))
        let wav = try H.finish(renderer, synchronizer, route)
        #expect(wav.frameCount == 132_300)
        let samples = wav.samples
        do { let holds = samples[0..<88_200].allSatisfy { $0 == 0.25 }; #expect(holds, "16-bit segment") }
        // Resampled: the middle of the segment settles on the DC value.
        for frame in stride(from: 44_100 + 1_000, to: 88_200 - 1_000, by: 997) {
            #expect(abs(samples[frame * 2] - 0.5) < 1e-3 && abs(samples[frame * 2 + 1] + 0.5) < 1e-3, "48 kHz segment at \(frame)")
        }
        do { let holds = samples[(88_200 * 2)..<(110_250 * 2)].allSatisfy { $0 == 0.125 }; #expect(holds, "24-bit mono segment") }
        let weight: Float = 0.8 / (1 + 0.7071 + 0.7071)
        for frame in stride(from: 110_250 + 500, to: 132_300 - 500, by: 499) {
            #expect(abs(samples[frame * 2] - weight) < 1e-3, "5.1 segment at \(frame): \(samples[frame * 2])")
        }
    }

    @Test func volumeAndMuteScaleTheOutput() throws {
        let (renderer, synchronizer, route) = try H.fastRenderer("volume.wav")
        renderer.volume = 0.5
        renderer.enqueue(H.constant(0.5, frames: 44_100, at: 0))
        H.play(synchronizer, from: .zero, until: MediaTime(value: 1, timescale: 2))
        renderer.isMuted = true
        H.play(synchronizer, from: .invalid, until: MediaTime(value: 1, timescale: 1))
        let left = H.left(try H.finish(renderer, synchronizer, route))
        do { let holds = left[0..<22_050].allSatisfy { $0 == 0.25 }; #expect(holds) }
        do { let holds = left[22_050...].allSatisfy { $0 == 0 }; #expect(holds) }
    }

    @Test func compressedBuffersFailTheRendererWithAReason() throws {
        let renderer = AudioRenderer(route: NullRoute())
        #expect(renderer.status == .unknown)
        renderer.enqueue(SampleBuffer(compressedFormat: AudioFormat(compressedCodec: "aac", sampleRate: 44_100, channelCount: 2),
                                      packets: [[1, 2, 3]], frameCount: 1024, presentationTime: .zero))
        #expect(renderer.status == .failed)
        #expect(renderer.error?.description.contains("aac") == true)
        #expect(!renderer.isReadyForMoreMediaData)
    }
}
