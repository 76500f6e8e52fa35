import LongformCore
import LongformRendering

/// Plays nowhere, in real time: pulls audio at the pace of the host clock and discards it.
/// A monitor, if set, sees every rendered period with the host time it is "heard" at (for tests and meters).
public final class NullRoute: AudioRoute, @unchecked Sendable {
    public let name = "null"
    public let format: AudioFormat
    public let pacing = RoutePacing.realTime
    public let preferredLookAhead: Double
    public let clock: RouteClock
    /// Frames per render period.
    public let periodFrames: Int
    private let thread = RestartableRouteThread()
    private let monitor: (@Sendable (_ firstFrame: Int64, _ hostTime: UInt64, _ samples: UnsafeBufferPointer<Float>) -> Void)?

    /// A null route at `sampleRate` with `channelCount` channels, rendering every `periodSeconds`.
    public init(sampleRate: Int = 44_100, channelCount: Int = 2, lookAhead: Double = 4, periodSeconds: Double = 0.05,
                monitor: (@Sendable (_ firstFrame: Int64, _ hostTime: UInt64, _ samples: UnsafeBufferPointer<Float>) -> Void)? = nil) {
        format = AudioFormat(sampleRate: sampleRate, channelCount: channelCount)
        preferredLookAhead = lookAhead
        clock = RouteClock(sampleRate: sampleRate)
        periodFrames = max(16, Int(Double(sampleRate) * periodSeconds))
        self.monitor = monitor
    }

    public func start(pullingFrom source: any RouteRenderSource) throws(RouteError) {
        let format = format, clock = clock, period = periodFrames, monitor = monitor
        thread.start(name: "longform.route.null", clock: clock) { thread in
            var buffer = [Float](repeating: 0, count: period * format.channelCount)
            let start = HostClock.now() + 1_000_000
            var frame: Int64 = 0
            while !thread.shouldStop {
                // Frame f is heard at start + f / rate; render each period just as it begins.
                let heardAt = start + UInt64(frame) * 1_000_000_000 / UInt64(format.sampleRate)
                clock.update(frame: frame, heardAtHostTime: heardAt)
                HostClock.sleep(untilNanoseconds: heardAt)
                buffer.withUnsafeMutableBufferPointer { pointer in
                    _ = source.render(into: pointer, frameCount: period, atRouteFrame: frame)
                    monitor?(frame, heardAt, UnsafeBufferPointer(pointer))
                }
                frame += Int64(period)
                clock.noteFramesRendered(frame)
            }
        }
    }

    /// Stops pulling; see `AudioRoute.stop(waiting:)`.
    public func stop(waiting: Bool = true) { thread.stop(waiting: waiting) }
}
