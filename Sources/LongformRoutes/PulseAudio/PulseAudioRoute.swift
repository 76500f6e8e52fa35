import CPulse
import Foundation
import Logging
import LongformCore
import LongformRendering

/// Plays to a PulseAudio server (or PipeWire's pulse server), to its default sink or a named one.
/// The clock is the frames written minus the latency the server reports, so that the timeline
/// reads the time of what comes out of the sink.
public final class PulseAudioRoute: AudioRoute, @unchecked Sendable {
    public let name: String
    public let format: AudioFormat
    public let pacing = RoutePacing.realTime
    public let preferredLookAhead: Double
    public let clock: RouteClock
    /// The sink, or nil for the server's default.
    public let sink: String?
    /// Server-side buffer we ask for, in seconds: the latency we then compensate.
    public let targetLatency: Double
    private let thread = RestartableRouteThread()
    private let logger = Logger(label: LogLabel.route)
    private let connection = LockedValue<PulseConnection?>(nil)

    /// A route to `sink` (nil: the default sink).
    public init(sink: String? = nil, sampleRate: Int = 44_100, channelCount: Int = 2, lookAhead: Double = 4, targetLatency: Double = 0.3) {
        self.sink = sink
        self.name = sink.map { "pulse:" + $0 } ?? "pulse"
        self.format = AudioFormat(sampleRate: sampleRate, channelCount: channelCount)
        self.preferredLookAhead = lookAhead
        self.targetLatency = targetLatency
        self.clock = RouteClock(sampleRate: sampleRate)
    }

    public func start(pullingFrom source: any RouteRenderSource) throws(RouteError) {
        let stream = try PulseConnection(route: name, sink: sink, format: format, targetLatency: targetLatency)
        connection.value = stream
        let format = format, clock = clock, logger = logger, name = name
        thread.start(name: "longform.route.pulse", clock: clock) { thread in
            let period = format.sampleRate / PulseConnection.periodsPerSecond
            var buffer = [Float](repeating: 0, count: period * format.channelCount)
            var frame: Int64 = 0
            while !thread.shouldStop {
                _ = buffer.withUnsafeMutableBufferPointer { source.render(into: $0, frameCount: period, atRouteFrame: frame) }
                do {
                    try stream.write(buffer)
                } catch {
                    logger.error("\(name): \(error)")
                    break
                }
                frame += Int64(period)
                clock.noteFramesRendered(frame)
                // What the server holds is heard `latency` from now: frames written minus that is heard now.
                let latency = stream.latencySeconds()
                clock.update(frame: frame - Int64(latency * Double(format.sampleRate)), heardAtHostTime: HostClock.now())
            }
            // Stopping is immediate: what the server still holds is past the end the timeline reached.
            stream.flush()
        }
    }

    /// Stops pulling; see `AudioRoute.stop(waiting:)`.
    public func stop(waiting: Bool = true) {
        thread.stop(waiting: waiting)
        if waiting { connection.value = nil }
    }
}

/// Owns a `pa_simple` playback stream and frees it in `deinit`.
final class PulseConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    /// Writes per second: 100 ms periods, few enough to stay cheap; the latency they add is compensated.
    static let periodsPerSecond = 10

    init(route: String, sink: String?, format: AudioFormat, targetLatency: Double) throws(RouteError) {
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(format.sampleRate), channels: UInt8(format.channelCount))
        let bytesPerSecond = Double(format.sampleRate * format.channelCount * 4)
        // Explicit prebuffer and request sizes: left to the server (with adjusted latency) the stream
        // can sit for seconds before it starts, waiting for a prebuffer the requests never fill.
        let frameBytes = UInt32(format.channelCount * 4)
        let periodBytes = UInt32(format.sampleRate / Self.periodsPerSecond) * frameBytes
        var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32(bytesPerSecond * targetLatency) / frameBytes * frameBytes,
                                        prebuf: periodBytes * 2, minreq: periodBytes, fragsize: UInt32.max)
        var error: Int32 = 0
        guard let handle = pa_simple_new(nil, "longform", PA_STREAM_PLAYBACK, sink, "playback", &spec, nil, &attributes, &error) else {
            throw RouteError(route: route, reason: String(cString: pa_strerror(error)))
        }
        self.handle = handle
    }

    deinit { pa_simple_free(handle) }

    /// Writes interleaved Float32 frames; blocks while the server's buffer is full.
    func write(_ samples: [Float]) throws(RouteError) {
        var error: Int32 = 0
        let status = samples.withUnsafeBytes { pa_simple_write(handle, $0.baseAddress, $0.count, &error) }
        if status < 0 { throw RouteError(route: "pulse", reason: String(cString: pa_strerror(error))) }
    }

    /// The server's latency for this stream: buffered audio plus the sink's.
    func latencySeconds() -> Double {
        var error: Int32 = 0
        let microseconds = pa_simple_get_latency(handle, &error)
        return microseconds == UInt64.max ? 0 : Double(microseconds) / 1_000_000
    }

    /// Drops what the server has not played yet.
    func flush() {
        var error: Int32 = 0
        _ = pa_simple_flush(handle, &error)
    }
}
