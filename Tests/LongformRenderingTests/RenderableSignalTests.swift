import Foundation
@testable import LongformRendering
import Testing

/// The as-fast-as-possible driver's wake-up: none is lost to a render in progress, and a detached
/// renderer never holds its route.
@Suite struct RenderableSignalTests {
    /// Seconds `body` took.
    private func seconds(_ body: () -> Void) -> Double {
        let start = Date()
        body()
        return Date().timeIntervalSince(start)
    }

    @Test func aWakeUpDuringARenderEndsTheNextWaitAtOnce() {
        let signal = RenderableSignal()
        signal.renderDidBegin()
        signal.wake() // while the render runs
        #expect(seconds { signal.wait(timeoutSeconds: 5) } < 1)
        // Seen: the next render begins, and a wait lasts until its timeout.
        signal.renderDidBegin()
        #expect(seconds { signal.wait(timeoutSeconds: 0.05) } >= 0.04)
    }

    @Test func aWakeUpFromAnotherThreadEndsAWait() {
        let signal = RenderableSignal()
        signal.renderDidBegin()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { signal.wake() }
        #expect(seconds { signal.wait(timeoutSeconds: 5) } < 1)
    }

    @Test func aDetachedRendererNeverWaits() {
        let signal = RenderableSignal()
        signal.renderDidBegin()
        signal.setDetached(true)
        #expect(seconds { signal.wait(timeoutSeconds: 5) } < 1)
        signal.setDetached(false)
        #expect(seconds { signal.wait(timeoutSeconds: 0.05) } >= 0.04)
    }
}
