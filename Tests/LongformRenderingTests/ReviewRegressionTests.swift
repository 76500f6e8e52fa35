import Dispatch
import Foundation
import LongformCore
import LongformRendering
import LongformRoutes
import LongformTestSupport
import Synchronization
import Testing

/// Cases found in review: each hung, stalled or played wrong before it was fixed.
@Suite struct ReviewRegressionTests {
    typealias H = RenderingHarness

    @Test func aScheduledRemovalOnAnAsFastAsPossibleRouteDoesNotDeadlock() throws {
        let (renderer, synchronizer, route) = try H.fastRenderer("scheduled-removal.wav")
        renderer.enqueue(H.constant(0.3, frames: 44_100 * 3, at: 0))
        let removed = DispatchSemaphore(value: 0)
        let result = Mutex<Bool?>(nil)
        synchronizer.removeRenderer(renderer, at: MediaTime(value: 1, timescale: 1)) { done in
            result.withLock { $0 = done }
            removed.signal()
        }
        synchronizer.setRate(1, time: .zero)
        #expect(removed.wait(timeout: .now() + 5) == .success, "the removal never completed")
        #expect(result.withLock { $0 } == true)
        #expect(synchronizer.renderers.isEmpty)
        // The route stopped at the removal time and finished its file.
        Thread.sleep(forTimeInterval: 0.3)
        let written = try WAVFileReader(path: route.path)
        #expect(written.frameCount == 44_100)
    }

    @Test func aRouteUsedBeforeCanBeUsedAgain() throws {
        let rendered = Mutex(0)
        let first = NullRoute(monitor: { _, _, samples in rendered.withLock { $0 += samples.count / 2 } })
        let second = NullRoute()
        let renderer = AudioRenderer(route: first)
        let synchronizer = RenderSynchronizer()
        try synchronizer.addRenderer(renderer)
        synchronizer.delaysRateChangeUntilHasSufficientMediaData = false
        synchronizer.setRate(1, time: .zero)
        Thread.sleep(forTimeInterval: 0.2)
        try renderer.setRoute(second)
        Thread.sleep(forTimeInterval: 0.2)
        try renderer.setRoute(first)
        let before = rendered.withLock { $0 }
        Thread.sleep(forTimeInterval: 0.3)
        let after = rendered.withLock { $0 }
        // Frames the route really rendered, not only what its clock says.
        #expect(after - before > 44_100 / 5, "the route used again rendered \(after - before) frames in 0.3 s")
        synchronizer.removeRenderer(renderer, at: .invalid)
    }

    @Test func ratesOtherThanZeroAndOneRunTheTimelineAtOne() {
        let synchronizer = RenderSynchronizer()
        synchronizer.setRate(2, time: .zero)
        #expect(synchronizer.rate == 1)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(abs(synchronizer.currentTime().seconds - 0.2) < 0.05)
    }

    @Test func aBoundaryAfterASeekToAnOffGridTimeStopsTheRenderOnTime() throws {
        let (renderer, synchronizer, route) = try H.fastRenderer("off-grid.wav")
        renderer.enqueue(H.constant(0.4, frames: 44_100 * 2, at: 0))
        let paused = H.pause(synchronizer, at: MediaTime(value: 1, timescale: 1))
        // 1/600 s is between two frames at 44.1 kHz.
        synchronizer.setRate(1, time: MediaTime(value: 1, timescale: 600))
        #expect(paused.wait(timeout: .now() + 5) == .success)
        let time = synchronizer.currentTime()
        #expect(time >= MediaTime(value: 1, timescale: 1) && time < MediaTime(value: 1, timescale: 1) + MediaTime(value: 1, timescale: 44_100),
                "paused at \(time), not within a frame after the boundary")
        let wav = try H.finish(renderer, synchronizer, route)
        #expect(abs(wav.frameCount - 44_027) <= 1, "\(wav.frameCount) frames from 1/600 s to 1 s")
    }

    /// A rewindable route driven by the test: it renders only when told, and its rewinds are only recorded.
    final class HandDrivenRoute: RewindableRoute {
        let name = "hand-driven"
        let format = AudioFormat(sampleRate: 44_100, channelCount: 2)
        let pacing = RoutePacing.realTime
        let preferredLookAhead = 10.0
        let clock = RouteClock(sampleRate: 44_100, rewindMarginFrames: 441)
        private let source = Mutex<(any RouteRenderSource)?>(nil)
        private let recordedRewinds = Mutex<[Int64]>([])
        /// The frames it was asked to rewind to, in order.
        var rewinds: [Int64] { recordedRewinds.withLock { $0 } }
        func start(pullingFrom source: any RouteRenderSource) { self.source.withLock { $0 = source } }
        func stop(waiting: Bool) {}
        func rewind(toFrame frame: Int64) { recordedRewinds.withLock { $0.append(frame) } }

        /// The left channel of `count` frames rendered from route frame `frame`.
        func render(from frame: Int64, count: Int) -> [Float] {
            var samples = [Float](repeating: 0, count: count * 2)
            _ = samples.withUnsafeMutableBufferPointer { source.withLock { $0 }!.render(into: $0, frameCount: count, atRouteFrame: frame) }
            clock.noteFramesRendered(max(clock.framesRendered, frame + Int64(count)))
            return stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        }
    }

    /// Found by the latency benchmark: play from stopped (a restart from an earlier media time
    /// than the stop's) sometimes came out 200 ms late. The route, told to rewind again by the next
    /// buffer, resumed a little before the restart's first frame, and the renderer had already
    /// dropped the preroll it rendered: it kept audio from the media time heard a second ago,
    /// which was the stop's time, not the restart's.
    @Test func aRouteThatRendersARestartAgainHearsItsFirstFramesAgain() throws {
        let route = HandDrivenRoute()
        let renderer = AudioRenderer(route: route)
        let synchronizer = RenderSynchronizer()
        synchronizer.delaysRateChangeUntilHasSufficientMediaData = false
        try synchronizer.addRenderer(renderer)
        defer { synchronizer.removeRenderer(renderer, at: .invalid) }
        route.clock.update(frame: 0, heardAtHostTime: HostClock.now())
        // Two seconds from 10 s on are rendered, one of them heard.
        renderer.enqueue(H.constant(0.5, frames: 44_100 * 2, at: 10))
        synchronizer.setRate(1, time: H.time(10))
        _ = route.render(from: 0, count: 44_100 * 2)
        route.clock.update(frame: 44_100, heardAtHostTime: HostClock.now())
        // Stopped, and started again from 0 with 0.2 s of preroll.
        synchronizer.setRate(0, time: .invalid)
        renderer.flush()
        renderer.enqueue(H.ramp(fromFrame: 0, frames: 8_820))
        synchronizer.setRate(1, time: .zero)
        let first = route.render(from: 44_100, count: 22_050)
        // The ramp's frame 0 is silent: its frame 1 is the first sample that is not.
        let one = try #require(first.firstIndex { $0 != 0 }, "the restart was not rendered")
        #expect(Array(first[(one - 1)..<(one - 1 + 8_820)]) == (0..<8_820).map { Float($0) / 1_048_576 }, "the restart rendered whole")
        // The route resumes 100 frames before the restart: every frame renders as it did.
        let resume = 44_100 + Int64(one - 1) - 100
        let again = route.render(from: resume, count: 22_050)
        #expect(Array(again[100..<(100 + 8_820)]) == Array(first[(one - 1)..<(one - 1 + 8_820)]), "the preroll rendered again")
    }
}
