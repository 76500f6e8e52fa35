import Dispatch
import LongformCore
import Synchronization

/// The thread a route renders on: started, asked to stop, joined. One per start of a route
/// (a stopped route that starts again gets a new one: see `RestartableRouteThread`).
package final class RouteThread: Sendable {
    private let isStopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let threadIdentity = Mutex<DetachedThread.Identity?>(nil)
    private let hasStarted = Atomic<Bool>(false)

    /// A thread not started yet.
    package init() {}

    /// Runs `body` on a new thread; `body` returns when `shouldStop` turns true.
    package func start(name: String, _ body: @escaping @Sendable (RouteThread) -> Void) {
        hasStarted.store(true, ordering: .sequentiallyConsistent)
        DetachedThread.start(name: name) { [self] in
            threadIdentity.withLock { $0 = DetachedThread.current }
            body(self)
            finished.signal()
        }
    }

    /// Whether the route should leave its loop.
    package var shouldStop: Bool { isStopRequested.load(ordering: .relaxed) }

    /// Asks the loop to end and waits for it, unless `waiting` is false or called from the loop's
    /// own thread. A stop that waits after one that did not (the caller woke the loop in between) waits too.
    package func stop(waiting: Bool = true) {
        guard hasStarted.load(ordering: .sequentiallyConsistent) else { return }
        isStopRequested.store(true, ordering: .sequentiallyConsistent)
        if !waiting || threadIdentity.withLock({ $0.map(DetachedThread.isCurrent) }) == true { return }
        finished.wait()
        finished.signal() // a later stop() returns at once
    }
}
