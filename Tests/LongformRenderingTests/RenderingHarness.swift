import Foundation
import LongformCore
import LongformRendering
import LongformRoutes
import LongformTestSupport
import Synchronization

/// Buffers whose every sample is known, and a renderer on an as-fast-as-possible WAV route.
enum RenderingHarness {
    /// A stereo Float32 buffer of `frames` frames at `time` seconds, every sample `value`.
    static func constant(_ value: Float, frames: Int, at seconds: Double, rate: Int = 44_100) -> SampleBuffer {
        let samples = [Float](repeating: value, count: frames * 2)
        var buffer = SampleBuffer(pcmFormat: AudioFormat(sampleRate: rate, channelCount: 2), planes: [bytes(samples)], frameCount: frames,
                                  presentationTime: MediaTime(value: Int64((seconds * Double(rate)).rounded()), timescale: Int32(rate)))
        buffer.outputPresentationTime = buffer.presentationTime
        return buffer
    }

    /// A stereo buffer whose sample for timeline frame f is f / 2^20 (exact in Float32 below 2^24 frames).
    static func ramp(fromFrame start: Int, frames: Int) -> SampleBuffer {
        var samples = [Float](repeating: 0, count: frames * 2)
        for frame in 0..<frames {
            let value = Float(start + frame) / 1_048_576
            samples[frame * 2] = value
            samples[frame * 2 + 1] = value
        }
        return SampleBuffer(pcmFormat: AudioFormat(sampleRate: 44_100, channelCount: 2), planes: [bytes(samples)], frameCount: frames,
                            presentationTime: MediaTime(value: Int64(start), timescale: 44_100))
    }

    static func bytes<T>(_ values: [T]) -> [UInt8] { values.withUnsafeBytes { Array($0) } }

    /// Seconds as a media time at 44.1 kHz.
    static func time(_ seconds: Double) -> MediaTime { MediaTime(value: Int64((seconds * 44_100).rounded()), timescale: 44_100) }

    /// A renderer on an as-fast-as-possible Float32 WAV route, added to a fresh synchronizer.
    static func fastRenderer(_ name: String, lookAhead: Double = 60) throws -> (AudioRenderer, RenderSynchronizer, WAVFileRoute) {
        let route = WAVFileRoute(path: TestAudio.path(name), sampleFormat: .f32, pacing: .asFastAsPossible, lookAhead: lookAhead)
        let renderer = AudioRenderer(route: route)
        let synchronizer = RenderSynchronizer()
        try synchronizer.addRenderer(renderer)
        return (renderer, synchronizer, route)
    }

    /// Sets the rate to 0 when the timeline reaches `time`, and returns a semaphore signalled then.
    static func pause(_ synchronizer: RenderSynchronizer, at time: MediaTime) -> DispatchSemaphore {
        let reached = DispatchSemaphore(value: 0)
        let queue = DispatchQueue(label: "test.pause")
        let token = Mutex<RenderSynchronizer.TimeObserverToken?>(nil)
        let observer = synchronizer.addBoundaryTimeObserver(forTimes: [time], queue: queue) { _ in
            synchronizer.setRate(0, time: .invalid)
            if let token = token.withLock({ $0 }) { synchronizer.removeTimeObserver(token) }
            reached.signal()
        }
        token.withLock { $0 = observer }
        return reached
    }

    /// Plays from `time` (`.invalid`: from where the timeline is) until the timeline reaches `end`,
    /// where the rate goes to 0; returns then.
    static func play(_ synchronizer: RenderSynchronizer, from time: MediaTime, until end: MediaTime) {
        let reached = pause(synchronizer, at: end)
        synchronizer.setRate(1, time: time)
        reached.wait()
    }

    /// Stops the route (completing the file) and reads it back.
    static func finish(_ renderer: AudioRenderer, _ synchronizer: RenderSynchronizer, _ route: WAVFileRoute) throws -> WAVFileReader {
        synchronizer.removeRenderer(renderer, at: .invalid)
        return try WAVFileReader(path: route.path)
    }

    /// The left-channel value at each frame of `wav`.
    static func left(_ wav: WAVFileReader) -> [Float] { stride(from: 0, to: wav.samples.count, by: 2).map { wav.samples[$0] } }
}
