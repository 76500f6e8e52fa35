import LongformRendering

/// A real-time route whose clock is the host clock at the nominal rate: frame `f` is heard at
/// `t0 + f / sampleRate`, `t0` chosen once at its start (network speakers, AirPlay receivers,
/// which each measure their offset to the sender's host clock). Such routes play one timeline
/// together in a `RouteGroup`, by starting at one `t0`.
public protocol HostClockedRoute: RewindableRoute, GroupVolumeRoute, NowPlayingRoute {
    /// How far ahead of the frame heard the route renders, at most (seconds): a group's leader is
    /// the member that renders furthest ahead.
    var rendersAhead: Double { get }
    /// Starts as `start(pullingFrom:)` does, frame 0 heard at the host time `gate` agrees with the
    /// group's other members (the route arrives at it when it is ready, with the lead it needs).
    func start(pullingFrom source: any RouteRenderSource, meetingAt gate: RouteStartGate?) throws(RouteError)
}
