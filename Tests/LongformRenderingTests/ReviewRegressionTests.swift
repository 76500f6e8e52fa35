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
}
