import LongformCore

/// The clock a timebase runs on, counted in ticks: host nanoseconds, or frames of a route.
public protocol TimebaseClock: AnyObject, Sendable {
    /// Ticks per second.
    var ticksPerSecond: Int64 { get }
    /// The tick heard or seen now.
    func currentTick() -> Int64
    /// The earliest tick a rate or time change can still affect (what is not yet rendered, or
    /// what a rewindable route can still take back).
    func earliestChangeableTick() -> Int64
    /// Whether ticks already rendered can be rendered again (the clock of a `RewindableRoute`):
    /// a change then applies inside a render claim, and the route is rewound to it.
    var isRewindable: Bool { get }
    /// The tick at host time `hostTime` nanoseconds.
    func tick(atHostTime hostTime: UInt64) -> Int64
}

/// The host clock in nanoseconds: the timebase's clock when no audio renderer is attached.
public final class HostTimebaseClock: TimebaseClock {
    /// A host clock.
    public init() {}
    public var ticksPerSecond: Int64 { 1_000_000_000 }
    public func currentTick() -> Int64 { Int64(HostClock.now()) }
    public func earliestChangeableTick() -> Int64 { currentTick() }
    public var isRewindable: Bool { false }
    public func tick(atHostTime hostTime: UInt64) -> Int64 { Int64(hostTime) }
}

/// A route's clock in frames: the timeline of a synchronizer whose audio renderer plays to the route.
final class RouteTimebaseClock: TimebaseClock {
    let clock: RouteClock
    init(_ clock: RouteClock) { self.clock = clock }
    var ticksPerSecond: Int64 { Int64(clock.sampleRate) }
    func currentTick() -> Int64 { clock.currentFrame() }
    func earliestChangeableTick() -> Int64 { clock.earliestChangeableFrame() }
    var isRewindable: Bool { clock.canRewind }
    func tick(atHostTime hostTime: UInt64) -> Int64 { clock.frame(atHostTime: hostTime) }
}
