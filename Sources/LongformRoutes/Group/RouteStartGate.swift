import LongformCore
import LongformRendering
import Synchronization

/// Where the members of a `RouteGroup` agree on the host time their frame 0 is heard at.
///
/// Each member arrives when it is ready (its receivers connected, or its own wait for them over)
/// with the lead it needs from then to its first frame (a receiver opening its output), and
/// leaves with one time for all: the last arrival plus the largest lead. So every member plays
/// frame 0 at that time, none early; one that arrives after the time was agreed (it waited
/// longer than `timeout`) gets the same time and joins at the frame heard.
public final class RouteStartGate: Sendable {
    /// How long the first arrival waits for the others (seconds).
    public let timeout: Double
    private let memberCount: Int
    private let clock: RouteClock
    private let state = Mutex(State())

    private struct State {
        var arrived = 0
        var firstArrival: UInt64?
        var largestLead: UInt64 = 0
        var agreedHostTime: UInt64?
    }

    /// A gate for `memberCount` members; the time agreed is set on `clock` (the group's) as frame 0's.
    public init(memberCount: Int, clock: RouteClock, timeout: Double = 5) {
        self.memberCount = memberCount
        self.clock = clock
        self.timeout = timeout
    }

    /// Arrives, needing `lead` seconds from now to play frame 0; returns the host time frame 0 is
    /// heard at, once every member has arrived or `timeout` has passed since the first did (or
    /// at once, when it was agreed before). `isStopped` ends the wait early (the route stops).
    public func startTime(lead: Double, isStopped: () -> Bool) -> UInt64 {
        let leadNanoseconds = UInt64(max(lead, 0) * 1e9)
        state.withLock { state in
            state.arrived += 1
            state.firstArrival = state.firstArrival ?? HostClock.now()
            state.largestLead = max(state.largestLead, leadNanoseconds)
        }
        while true {
            let agreed = state.withLock { state -> UInt64? in
                if let agreed = state.agreedHostTime { return agreed }
                let now = HostClock.now()
                guard state.arrived >= memberCount || now >= state.firstArrival! + UInt64(timeout * 1e9) || isStopped() else { return nil }
                let agreed = now + state.largestLead
                state.agreedHostTime = agreed
                clock.update(frame: 0, heardAtHostTime: agreed)
                return agreed
            }
            if let agreed { return agreed }
            HostClock.sleep(untilNanoseconds: HostClock.now() + 2_000_000)
        }
    }
}
