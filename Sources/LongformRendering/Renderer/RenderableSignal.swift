import LongformCore

/// Wakes an as-fast-as-possible route's driver waiting for audio to render. Every wake-up bumps a
/// count, and a wait lasts only while the count is still the one seen when the last render began:
/// a wake-up that comes while the route renders is never lost. A detached renderer never waits.
final class RenderableSignal: @unchecked Sendable {
    private let condition = ThreadCondition()
    private var count: UInt64 = 0 // guarded by `condition`, as everything below
    private var countAtRender: UInt64 = 0
    private var isDetached = false

    /// There may be audio to render (an enqueue, a flush, a timeline change).
    func wake() {
        condition.lock()
        count &+= 1
        condition.broadcast()
        condition.unlock()
    }

    /// A render begins: a wake-up from here on ends the next wait at once.
    func renderDidBegin() {
        condition.lock()
        countAtRender = count
        condition.unlock()
    }

    /// Whether waits end at once (the renderer left its synchronizer, so that its route sees its stop).
    func setDetached(_ detached: Bool) {
        condition.lock()
        isDetached = detached
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks until a wake-up since the last render began, a detach, or `timeoutSeconds` pass.
    func wait(timeoutSeconds: Double) {
        let deadline = HostClock.now() + UInt64(max(timeoutSeconds, 0) * 1e9)
        condition.lock()
        while !isDetached && count == countAtRender {
            let now = HostClock.now()
            guard now < deadline, condition.wait(nanoseconds: deadline - now) else { break }
        }
        condition.unlock()
    }
}
