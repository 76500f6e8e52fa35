import LongformCore
import Synchronization

/// Which route frame is heard at which host time: the clock of a route, read against the host clock.
///
/// A real-time route updates it after each write with "frame F is heard at host time H"
/// (frames written minus the device's latency) and, if it measures it, the device's rate against
/// the host clock; between updates it runs at that rate. A speaker places frames seconds ahead by
/// it: at the nominal rate, a device 200 ppm off the host clock heard a write 2 s ahead 400 µs off.
/// An as-fast-as-possible route has no relation to host time: its clock is the count of frames written.
public final class RouteClock: Sendable {
    /// Route frames per second.
    public let sampleRate: Int
    /// Whether the clock is the count of frames written (as-fast-as-possible routes).
    public let isDrivenByFramesWritten: Bool
    /// Whether the route can rewind (a `RewindableRoute`).
    public let canRewind: Bool
    private let margin: Atomic<Int64>
    /// The clocks whose largest margin is this one's (a group of routes: a change must reach every member).
    private let followedClocks: [RouteClock]

    private struct State {
        var anchorFrame: Int64 = 0
        var anchorHostTime: UInt64 = 0
        /// The device's frames per host-clock second over the nominal rate.
        var rate = 1.0
        var isRunning = false
        var framesRendered: Int64 = 0
        /// The largest frame ever reported, so that the clock never runs backward.
        var lastReportedFrame: Int64 = 0
    }
    private let state = Mutex(State())

    /// A clock for a route running at `sampleRate`; `rewindMarginFrames` for a route that can rewind.
    public init(sampleRate: Int, isDrivenByFramesWritten: Bool = false, rewindMarginFrames: Int64? = nil) {
        self.sampleRate = sampleRate
        self.isDrivenByFramesWritten = isDrivenByFramesWritten
        canRewind = rewindMarginFrames != nil
        margin = Atomic(rewindMarginFrames ?? 0)
        followedClocks = []
    }

    /// A clock for a group of rewindable routes at `sampleRate`: its rewind margin is the largest
    /// of `members`' at each reading (each member's may grow or shrink as it plays).
    public init(sampleRate: Int, followingMarginsOf members: [RouteClock]) {
        self.sampleRate = sampleRate
        isDrivenByFramesWritten = false
        canRewind = true
        margin = Atomic(0)
        followedClocks = members
    }

    /// For a `RewindableRoute`: how many frames after the one heard now a rewind can still reach
    /// (the time the route needs to discard and write again). Nil for a route that cannot rewind.
    public var rewindMarginFrames: Int64? {
        guard canRewind else { return nil }
        guard !followedClocks.isEmpty else { return margin.load(ordering: .relaxed) }
        return followedClocks.map { $0.rewindMarginFrames ?? 0 }.max()
    }

    /// Sets the rewind margin, for a route that learns how far its device lets it rewind.
    public func setRewindMarginFrames(_ frames: Int64) {
        if canRewind { margin.store(max(frames, 0), ordering: .relaxed) }
    }

    /// The earliest frame a change can still reach: the next one the route renders, or, on a
    /// route that can rewind, the frame heard now plus the margin.
    public func earliestChangeableFrame() -> Int64 {
        if let margin = rewindMarginFrames { return currentFrame() + margin }
        return max(framesRendered, isDrivenByFramesWritten ? 0 : currentFrame())
    }

    /// Starts the clock over at frame 0, for a route that starts again.
    public func reset() {
        state.withLock { $0 = State() }
    }

    /// Records that route frame `frame` is heard at host time `hostTime` (nanoseconds), and that
    /// the device plays `rate` times as many frames per host-clock second as its nominal rate.
    public func update(frame: Int64, heardAtHostTime hostTime: UInt64, rate: Double = 1) {
        state.withLock {
            $0.anchorFrame = frame
            $0.anchorHostTime = hostTime
            $0.rate = rate
            $0.isRunning = true
        }
    }

    /// Stops the clock at the frame heard now until the next `update`: the route's device stopped
    /// (its stream failed), and what it did not play is played when it starts again.
    public func standStill() {
        _ = currentFrame()
        state.withLock { $0.isRunning = false }
    }

    /// The device's frames per host-clock second over the nominal rate, as the route last said (1 until it does).
    public var rate: Double { state.withLock { $0.rate } }

    /// Whether the route has said which frame is heard when (it has started playing).
    public var isRunning: Bool { state.withLock { $0.isRunning } }

    /// Records how many frames the route has taken from its source (the next frame it will render).
    public func noteFramesRendered(_ frames: Int64) {
        state.withLock { $0.framesRendered = frames }
    }

    /// The next frame the route will render: the earliest frame a change can still reach.
    public var framesRendered: Int64 { state.withLock { $0.framesRendered } }

    /// The frame heard now (never less than one reported before).
    public func currentFrame() -> Int64 {
        if isDrivenByFramesWritten { return framesRendered }
        return frame(atHostTime: HostClock.now(), monotonic: true)
    }

    /// The frame heard at host time `hostTime`.
    public func frame(atHostTime hostTime: UInt64) -> Int64 {
        if isDrivenByFramesWritten { return framesRendered }
        return frame(atHostTime: hostTime, monotonic: false)
    }

    private func frame(atHostTime hostTime: UInt64, monotonic: Bool) -> Int64 {
        state.withLock { state in
            guard state.isRunning else { return state.lastReportedFrame }
            // Exact at the nominal rate for the elapsed times between updates (a product under 2^53).
            let elapsed = Double(Int64(bitPattern: hostTime &- state.anchorHostTime))
            let frame = state.anchorFrame + Int64((elapsed * (Double(sampleRate) * state.rate) / 1e9).rounded(.towardZero))
            guard monotonic else { return frame }
            state.lastReportedFrame = max(state.lastReportedFrame, frame)
            return state.lastReportedFrame
        }
    }

    /// The host time at which `frame` is heard (for as-fast-as-possible routes: now).
    public func hostTime(ofFrame frame: Int64) -> UInt64 {
        if isDrivenByFramesWritten { return HostClock.now() }
        return state.withLock { state in
            let offset = Int64((Double(frame - state.anchorFrame) * 1e9 / (Double(sampleRate) * state.rate)).rounded(.towardZero))
            return UInt64(max(0, Int64(state.anchorHostTime) + offset))
        }
    }
}
