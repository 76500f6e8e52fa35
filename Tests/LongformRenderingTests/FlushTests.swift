import Dispatch
import LongformCore
import LongformRendering
import LongformRoutes
import LongformTestSupport
import Testing

/// `flush(fromSourceTime:)`, checked on the samples that came out.
@Suite struct FlushTests {
    typealias H = RenderingHarness

    /// Ten half-second buffers, buffer k holding (k + 1) / 100, on a fresh as-fast-as-possible route.
    static func tenBuffers(_ name: String) throws -> (AudioRenderer, RenderSynchronizer, WAVFileRoute) {
        let (renderer, synchronizer, route) = try H.fastRenderer(name)
        for k in 0..<10 { renderer.enqueue(H.constant(Float(k + 1) / 100, frames: 22_050, at: Double(k) * 0.5)) }
        return (renderer, synchronizer, route)
    }

    /// Whether buffer k of `tenBuffers` is intact in `left`.
    static func isIntact(_ left: [Float], buffer k: Int) -> Bool {
        left[(k * 22_050)..<((k + 1) * 22_050)].allSatisfy { $0 == Float(k + 1) / 100 }
    }

    @Test func flushRemovesExactlyTheBuffersAtAndAfterTheTime() async throws {
        let (renderer, synchronizer, route) = try Self.tenBuffers("flush-exact.wav")
        // 2.25 s falls inside buffer 4 (2.0–2.5 s): buffer 4 stays whole, 5…9 go.
        #expect(renderer.flush(fromSourceTime: H.time(2.25)))
        renderer.enqueue(H.constant(0.5, frames: 22_050, at: 2.5))
        renderer.enqueue(H.constant(0.5, frames: 22_050, at: 3.0))
        H.play(synchronizer, from: .zero, until: H.time(3.5))
        let left = H.left(try H.finish(renderer, synchronizer, route))
        #expect(left.count == 154_350)
        for k in 0..<5 {
            #expect(Self.isIntact(left, buffer: k), "buffer \(k) changed")
        }
        do { let holds = left[110_250...].allSatisfy { $0 == 0.5 }; #expect(holds, "a flushed buffer was heard") }
    }

    @Test func aFlushBehindThePlayheadIsRefusedAndChangesNothing() async throws {
        let (renderer, synchronizer, route) = try Self.tenBuffers("flush-refused.wav")
        H.play(synchronizer, from: .zero, until: H.time(2.0))
        #expect(synchronizer.currentTime() == H.time(2.0))
        #expect(renderer.flush(fromSourceTime: H.time(1.5)) == false)
        #expect(renderer.flush(fromSourceTime: H.time(1.99)) == false)
        H.play(synchronizer, from: .invalid, until: H.time(5.0))
        let left = H.left(try H.finish(renderer, synchronizer, route))
        #expect(left.count == 220_500)
        for k in 0..<10 {
            #expect(Self.isIntact(left, buffer: k), "buffer \(k) changed after a refused flush")
        }
    }

    @Test func aFlushAtThePlayheadOfTheWAVRouteSucceeds() async throws {
        let (renderer, synchronizer, route) = try Self.tenBuffers("flush-at-playhead.wav")
        H.play(synchronizer, from: .zero, until: H.time(2.0))
        #expect(renderer.flush(fromSourceTime: H.time(2.0)))
        renderer.enqueue(H.constant(0.9, frames: 22_050, at: 2.0))
        H.play(synchronizer, from: .invalid, until: H.time(2.5))
        let left = H.left(try H.finish(renderer, synchronizer, route))
        #expect(left.count == 110_250)
        for k in 0..<4 { #expect(Self.isIntact(left, buffer: k), "buffer \(k) before the playhead changed") }
        do { let holds = left[88_200...].allSatisfy { $0 == 0.9 }; #expect(holds, "the audio after the playhead was not replaced from exactly there") }
    }

    @Test func afterASeekBackTheFlushLimitIsTheNewPlayhead() async throws {
        let (renderer, synchronizer, route) = try Self.tenBuffers("flush-after-seek.wav")
        H.play(synchronizer, from: .zero, until: H.time(4.0))
        #expect(renderer.flush(fromSourceTime: H.time(3.0)) == false, "3 s was already played")
        // Seek back to 1 s: 3 s lies ahead of the playhead again.
        synchronizer.setRate(0, time: H.time(1.0))
        #expect(renderer.flush(fromSourceTime: H.time(3.0)), "a flush ahead of the new playhead was refused")
        #expect(renderer.flush(fromSourceTime: H.time(0.5)) == false, "a flush behind the new playhead was accepted")
        // Played audio has left the queue: after a seek back the client enqueues again.
        renderer.enqueue(H.constant(0.7, frames: 88_200, at: 1.0))
        renderer.enqueue(H.constant(0.9, frames: 22_050, at: 3.0))
        H.play(synchronizer, from: .invalid, until: H.time(3.5))
        let left = H.left(try H.finish(renderer, synchronizer, route))
        #expect(left.count == 176_400 + 110_250)
        let replayedBefore = left[176_400..<264_600].allSatisfy { $0 == 0.7 }
        let replacement = left[264_600...].allSatisfy { $0 == 0.9 }
        #expect(replayedBefore && replacement, "the audio after the seek is not what was enqueued for it")
    }

    @Test func aFlushInsideAResampledStreamLeavesNoGapAtTheSplice() async throws {
        let (renderer, synchronizer, route) = try H.fastRenderer("flush-resampled.wav")
        // Half-second 48 kHz buffers, resampled to the route's 44.1 kHz by one continuous filter.
        for k in 0..<5 { renderer.enqueue(H.constant(0.3, frames: 24_000, at: Double(k) * 0.5, rate: 48_000)) }
        #expect(renderer.flush(fromSourceTime: MediaTime(value: 1, timescale: 1)))
        for k in 2..<4 { renderer.enqueue(H.constant(0.6, frames: 24_000, at: Double(k) * 0.5, rate: 48_000)) }
        renderer.stopRequestingMediaData()
        H.play(synchronizer, from: .zero, until: MediaTime(value: 2, timescale: 1))
        let left = H.left(try H.finish(renderer, synchronizer, route))
        #expect(left.count == 88_200)
        // Around the splice at 1 s the filter blends the two levels, but there is no silence.
        let quietest = left[(44_100 - 400)..<(44_100 + 400)].map { abs($0) }.min() ?? 0
        #expect(quietest > 0.2, "a gap at the splice: the level drops to \(quietest)")
        let settledBefore = left[40_000..<43_000].allSatisfy { abs($0 - 0.3) < 1e-3 }
        let settledAfter = left[46_000..<80_000].allSatisfy { abs($0 - 0.6) < 1e-3 }
        #expect(settledBefore && settledAfter, "the levels either side of the splice are wrong")
    }

    @Test func flushDiscardsEverythingAndEnqueueingGoesOn() async throws {
        let (renderer, synchronizer, route) = try H.fastRenderer("flush-all.wav")
        for k in 0..<4 { renderer.enqueue(H.constant(0.25, frames: 22_050, at: Double(k) * 0.5)) }
        renderer.flush()
        renderer.enqueue(H.constant(0.75, frames: 44_100, at: 0))
        H.play(synchronizer, from: .zero, until: H.time(1.0))
        let left = H.left(try H.finish(renderer, synchronizer, route))
        do { let holds = left.count == 44_100 && left.allSatisfy { $0 == 0.75 }; #expect(holds) }
    }
}
