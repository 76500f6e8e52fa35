import Foundation
import Synchronization

/// The thread a route renders on: started once, asked to stop, joined.
final class RouteThread: Sendable {
    private let isStopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let threadIdentity = Mutex<ObjectIdentifier?>(nil)
    private let hasStarted = Atomic<Bool>(false)

    /// Runs `body` on a new high-priority thread; `body` returns when `shouldStop` turns true.
    func start(name: String, _ body: @escaping @Sendable (RouteThread) -> Void) {
        hasStarted.store(true, ordering: .sequentiallyConsistent)
        let thread = Thread { [self] in
            threadIdentity.withLock { $0 = ObjectIdentifier(Thread.current) }
            body(self)
            finished.signal()
        }
        thread.name = name
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    /// Whether the route should leave its loop.
    var shouldStop: Bool { isStopRequested.load(ordering: .relaxed) }

    /// Asks the loop to end and waits for it, unless called from the loop's own thread.
    func stop() {
        guard hasStarted.load(ordering: .sequentiallyConsistent), !isStopRequested.exchange(true, ordering: .sequentiallyConsistent) else { return }
        if threadIdentity.withLock({ $0 }) == ObjectIdentifier(Thread.current) { return }
        finished.wait()
    }
}
