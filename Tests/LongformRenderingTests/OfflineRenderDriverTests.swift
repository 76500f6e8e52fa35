import Dispatch
import Foundation
import LongformCore
import LongformRendering
import LongformRoutes
import LongformTestSupport
import Testing

/// The as-fast-as-possible route's driver: observers run between writes, and a block that changes
/// the route or removes the renderer ends the run at the frame it fired at, without waiting for itself.
@Suite struct OfflineRenderDriverTests {
    typealias H = RenderingHarness

    /// Plays a 2 s ramp on a fast WAV route, runs `change` from a boundary observer at 0.5 s, and
    /// returns whether the observer's block finished within 10 s and the file written.
    static func run(_ name: String, change: @escaping @Sendable (AudioRenderer, RenderSynchronizer) throws -> Void) throws -> (finished: Bool, wav: WAVFileReader) {
        let (renderer, synchronizer, route) = try H.fastRenderer(name)
        renderer.enqueue(H.ramp(fromFrame: 0, frames: 88_200))
        let done = DispatchSemaphore(value: 0)
        let token = synchronizer.addBoundaryTimeObserver(forTimes: [H.time(0.5)], queue: DispatchQueue(label: "test.change")) { _ in
            try? change(renderer, synchronizer)
            done.signal()
        }
        synchronizer.setRate(1, time: .zero)
        let finished = done.wait(timeout: .now() + 10) == .success
        synchronizer.removeTimeObserver(token)
        synchronizer.removeRenderer(renderer, at: .invalid)
        return (finished, try WAVFileReader(path: route.path))
    }

    @Test func anObserverMaySwitchTheRouteAndTheFileEndsWhereItFired() throws {
        let (finished, wav) = try Self.run("driver-switch.wav") { renderer, _ in try renderer.setRoute(NullRoute()) }
        #expect(finished, "the observer's route change waited for the route that waited for it")
        #expect(wav.frameCount == 22_050)
        #expect(H.left(wav).last == Float(22_049) / 1_048_576)
    }

    @Test func anObserverMayRemoveTheRendererAtOnce() throws {
        let (finished, wav) = try Self.run("driver-remove.wav") { renderer, synchronizer in synchronizer.removeRenderer(renderer, at: .invalid) }
        #expect(finished, "the observer's removal waited for the route that waited for it")
        #expect(wav.frameCount == 22_050)
    }
}
