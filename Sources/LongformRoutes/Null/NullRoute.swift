import LongformCore
import LongformRendering

/// Plays nowhere, in real time: pulls audio at the pace of the host clock and discards it.
/// A monitor, if set, sees every rendered period with the host time it is "heard" at (for tests and meters).
///
/// It behaves like a device with a buffer of one period that it can rewind: a period is rendered
/// as it begins and held until it is heard. A rewind renders the part not heard yet again, and
/// the monitor then sees frames it saw before a second time: the later rendering replaces the
/// earlier from its first frame on.
public final class NullRoute: RewindableRoute, @unchecked Sendable {
    public let name = "null"
    public let format: AudioFormat
    public let pacing = RoutePacing.realTime
    public let preferredLookAhead: Double
    public let clock: RouteClock
    /// Frames per render period.
    public let periodFrames: Int
    private let thread = RestartableRouteThread()
    private let rewinds = RewindSignal()
    private let monitor: (@Sendable (_ firstFrame: Int64, _ hostTime: UInt64, _ samples: UnsafeBufferPointer<Float>) -> Void)?

    /// A null route at `sampleRate` with `channelCount` channels, rendering every `periodSeconds`.
    /// With `rewindMarginSeconds` nil it cannot rewind, like a device that plays what it is handed.
    public init(sampleRate: Int = 44_100, channelCount: Int = 2, lookAhead: Double = 4, periodSeconds: Double = 0.1,
                rewindMarginSeconds: Double? = 0.0005,
                monitor: (@Sendable (_ firstFrame: Int64, _ hostTime: UInt64, _ samples: UnsafeBufferPointer<Float>) -> Void)? = nil) {
        format = AudioFormat(sampleRate: sampleRate, channelCount: channelCount)
        preferredLookAhead = lookAhead
        clock = RouteClock(sampleRate: sampleRate, rewindMarginFrames: rewindMarginSeconds.map { Int64(($0 * Double(sampleRate)).rounded(.up)) })
        periodFrames = max(16, Int(Double(sampleRate) * periodSeconds))
        self.monitor = monitor
    }

    public func start(pullingFrom source: any RouteRenderSource) throws(RouteError) {
        let format = format, clock = clock, period = periodFrames, monitor = monitor, rewinds = rewinds
        thread.start(name: "longform.route.null", clock: clock) { thread in
            var buffer = [Float](repeating: 0, count: period * format.channelCount)
            let start = HostClock.now() + 1_000_000
            // Frame f is heard at start + f / rate.
            func heardAt(_ frame: Int64) -> UInt64 { start + UInt64(frame) * 1_000_000_000 / UInt64(format.sampleRate) }
            func render(from frame: Int64, count: Int) {
                buffer.withUnsafeMutableBufferPointer { pointer in
                    let slice = UnsafeMutableBufferPointer(rebasing: pointer[0..<(count * format.channelCount)])
                    _ = source.render(into: slice, frameCount: count, atRouteFrame: frame)
                    monitor?(frame, heardAt(frame), UnsafeBufferPointer(slice))
                }
            }
            clock.update(frame: 0, heardAtHostTime: start)
            rewinds.reset()
            var frame: Int64 = 0 // the next frame to render
            while !thread.shouldStop {
                // Render each period just as it begins; a rewind meanwhile renders again what is not heard yet.
                if let target = rewinds.wait(untilNanoseconds: heardAt(frame)) {
                    let from = max(target, clock.currentFrame())
                    if from > target { source.routeDidResume(atFrame: from, afterRewindTo: target) }
                    if from < frame { render(from: from, count: Int(frame - from)) }
                    continue
                }
                if thread.shouldStop { break }
                render(from: frame, count: period)
                frame += Int64(period)
                clock.noteFramesRendered(frame)
            }
        }
    }

    /// Renders again from `frame`; see `RewindableRoute`.
    public func rewind(toFrame frame: Int64) { rewinds.post(frame: frame) }

    /// Stops pulling; see `AudioRoute.stop(waiting:)`. The thread wakes at once rather than at its next period.
    public func stop(waiting: Bool = true) {
        thread.stop(waiting: false)
        rewinds.interrupt()
        if waiting { thread.stop(waiting: true) }
    }
}
