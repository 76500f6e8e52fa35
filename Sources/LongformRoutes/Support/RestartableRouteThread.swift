import LongformRendering

/// The current `RouteThread` of a route that may be stopped and started again (a renderer
/// removed and added back, a route change back and forth).
package final class RestartableRouteThread: Sendable {
    private let current = LockedValue<RouteThread?>(nil)

    /// No thread yet.
    package init() {}

    /// Stops any previous thread, restarts `clock` at frame 0, and runs `body` on a new thread.
    package func start(name: String, clock: RouteClock, _ body: @escaping @Sendable (RouteThread) -> Void) {
        current.value?.stop()
        clock.reset()
        let thread = RouteThread()
        current.value = thread
        thread.start(name: name, body)
    }

    /// Stops the current thread; waits for it unless `waiting` is false or it is the caller.
    package func stop(waiting: Bool = true) {
        current.value?.stop(waiting: waiting)
    }
}
