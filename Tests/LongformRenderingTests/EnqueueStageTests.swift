import LongformCore
@testable import LongformRendering
import Testing

/// The renderer's enqueue stage alone, with no renderer, route or thread: the converter that puts
/// buffers into the route's format and on its frames, and the queue the route reads.
@Suite struct EnqueueStageTests {
    private typealias H = RenderingHarness

    /// Converts `buffers` to 44.1 kHz stereo and queues them, the resampler's tail included.
    private func queued(_ buffers: [SampleBuffer]) -> RenderQueue {
        var converter = StreamConverter(outputRate: 44_100, outputChannels: 2)
        var queue = RenderQueue(channelCount: 2)
        for buffer in buffers { queue.append(converter.convert(buffer)) }
        queue.append(converter.finish())
        return queue
    }

    /// `count` frames read from `frame`, left channel.
    private func left(_ queue: inout RenderQueue, from frame: Int64, count: Int) -> (samples: [Float], covered: Int) {
        var out = [Float](repeating: .nan, count: count * 2)
        let covered = out.withUnsafeMutableBufferPointer { queue.read(into: $0, from: frame, count: count) }
        return (stride(from: 0, to: out.count, by: 2).map { out[$0] }, covered)
    }

    @Test func buffersAtTheRoutesRateArePlacedOnTheirFramesUnchanged() {
        var queue = queued([H.ramp(fromFrame: 0, frames: 1_000), H.ramp(fromFrame: 1_000, frames: 1_000)])
        #expect(queue.startFrame == 0 && queue.endFrame == 2_000)
        let read = left(&queue, from: 990, count: 20)
        #expect(read.covered == 20 && read.samples == (990..<1_010).map { Float($0) / 1_048_576 }, "across the buffers' seam, exactly")
    }

    @Test func aGapIsSilenceAndCountsAsNotCovered() {
        var queue = queued([H.constant(0.5, frames: 100, at: 0), H.constant(0.25, frames: 100, at: 200.0 / 44_100)])
        let read = left(&queue, from: 50, count: 200)
        #expect(read.covered == 100)
        #expect(read.samples[0..<50].allSatisfy { $0 == 0.5 } && read.samples[50..<150].allSatisfy { $0 == 0 } && read.samples[150...].allSatisfy { $0 == 0.25 })
    }

    @Test func buffersThatFollowAtAnotherRateAreOneRunEndingAtItsTimelineLength() {
        // Ten 4,800-frame buffers at 48 kHz, back to back: one second, 44,100 route frames exactly.
        let buffers = (0..<10).map { H.constant(0.5, frames: 4_800, at: Double($0) * 0.1, rate: 48_000) }
        var queue = queued(buffers)
        #expect(queue.startFrame == 0 && queue.endFrame == 44_100)
        // One continuous filter: the level holds across every buffer seam (a filter restarted at
        // each would dip there).
        let read = left(&queue, from: 1_000, count: 42_000)
        #expect(read.covered == 42_000 && read.samples.allSatisfy { abs($0 - 0.5) < 1e-3 }, "\(read.samples.map { abs($0 - 0.5) }.max() ?? 0)")
    }

    @Test func aCutDropsTheBuffersFromItsTimeAndCutsResampledAudioAtItsFrame() {
        var plain = queued([H.constant(0.5, frames: 4_410, at: 0), H.constant(0.5, frames: 4_410, at: 0.1), H.constant(0.5, frames: 4_410, at: 0.2)])
        plain.removeChunks(fromSourceTime: H.time(0.15), routeFrame: 6_615)
        #expect(plain.endFrame == 8_820, "the buffer at 0.1 s began before the cut: kept whole")
        plain.removeChunks(fromSourceTime: H.time(0.15), routeFrame: 6_615, cuttingEveryChunk: true)
        #expect(plain.endFrame == 6_615, "at the playhead: cut inside the buffer")
        var resampled = queued((0..<3).map { H.constant(0.5, frames: 4_800, at: Double($0) * 0.1, rate: 48_000) })
        resampled.removeChunks(fromSourceTime: H.time(0.15), routeFrame: 6_615)
        #expect(resampled.endFrame == 6_615, "resampled audio straddles its buffers: cut at the frame")
    }

    @Test func readAudioIsDroppedUnlessARewindMayNeedIt() {
        var queue = queued([H.constant(0.5, frames: 4_410, at: 0), H.constant(0.5, frames: 4_410, at: 0.1)])
        var out = [Float](repeating: 0, count: 4_410 * 2)
        out.withUnsafeMutableBufferPointer { _ = queue.read(into: $0, from: 0, count: 4_410, retainingFrom: 0) }
        #expect(queue.startFrame == 0, "retained for a rewind")
        out.withUnsafeMutableBufferPointer { _ = queue.read(into: $0, from: 0, count: 4_410) }
        #expect(queue.startFrame == 4_410 && queue.byteCount == 4_410 * 2 * 4, "played: dropped, and its memory with it")
    }

    @Test func aResetDropsTheOpenRunWithoutItsTail() {
        var finished = StreamConverter(outputRate: 44_100, outputChannels: 2)
        _ = finished.convert(H.constant(0.5, frames: 4_800, at: 0, rate: 48_000))
        #expect(!finished.finish().isEmpty, "an open run ends with its tail")
        var converter = StreamConverter(outputRate: 44_100, outputChannels: 2)
        _ = converter.convert(H.constant(0.5, frames: 4_800, at: 0, rate: 48_000))
        converter.reset()
        #expect(converter.finish().isEmpty, "a flush: the tail of the old run is not heard")
    }
}
