import LongformCore

/// The rewinds asked of a route's thread: callers post the frame to render again from, and the
/// thread, waiting for its next period, wakes at once to take it. Several rewinds before the
/// thread takes them count as the earliest.
package final class RewindSignal: @unchecked Sendable {
    private let condition = ThreadCondition()
    private var pendingFrame: Int64? // guarded by `condition`
    private var isInterrupted = false // guarded by `condition`

    /// No rewind pending.
    package init() {}

    /// Asks the thread to render again from `frame`.
    package func post(frame: Int64) {
        condition.lock()
        pendingFrame = min(pendingFrame ?? frame, frame)
        condition.broadcast()
        condition.unlock()
    }

    /// Ends the current or next wait at once, without a rewind: the route is stopping, or has
    /// more to write.
    package func interrupt() {
        condition.lock()
        isInterrupted = true
        condition.broadcast()
        condition.unlock()
    }

    /// Forgets a rewind or an interruption meant for an earlier run of the route.
    package func reset() {
        condition.lock()
        pendingFrame = nil
        isInterrupted = false
        condition.unlock()
    }

    /// Takes the pending rewind, if any.
    package func take() -> Int64? {
        condition.lock()
        defer { pendingFrame = nil; condition.unlock() }
        return pendingFrame
    }

    /// Waits until the host clock reads `deadline` nanoseconds, a rewind is posted or `interrupt()`
    /// is called; returns the rewind's frame (taken), or nil otherwise.
    package func wait(untilNanoseconds deadline: UInt64) -> Int64? {
        condition.lock()
        defer { condition.unlock() }
        while pendingFrame == nil {
            if isInterrupted {
                isInterrupted = false
                return nil
            }
            let now = HostClock.now()
            guard now < deadline else { return nil }
            // The host clock may be skewed (a test's): wait for the remaining interval, then read it again.
            condition.wait(nanoseconds: deadline - now)
        }
        defer { pendingFrame = nil }
        return pendingFrame
    }
}
