import CPulse
import Foundation
import Logging
import LongformCore
import LongformRendering
import LongformRoutes

/// Plays to a PulseAudio server (or PipeWire's pulse server), to its default sink or a named one.
///
/// The server holds a large buffer (`bufferDuration`, 2 s) that the route fills in large writes
/// (1 s), so that it wakes up about once a second; its sink renders only a little of it ahead
/// (`sinkLatency`). The route can still take that buffer back: a rewind flushes the stream and,
/// with the same request, writes again from just behind the frame heard (what comes before the
/// frame the rewind asked for, from its copy of what it wrote), so that a pause, a seek or an edit
/// is heard within milliseconds. The stream never stops, so each frame is heard at the time the
/// clock gives it. The clock is the server's own account of the frame heard now (the stream's
/// read position less the sink's latency).
public final class PulseAudioRoute: RewindableRoute, @unchecked Sendable {
    public let name: String
    public let format: AudioFormat
    public let pacing = RoutePacing.realTime
    public let preferredLookAhead: Double
    public let clock: RouteClock
    /// The sink, or nil for the server's default.
    public let sink: String?
    /// Seconds of audio the server holds ahead of what is heard, at most: two writes in the
    /// stream's queue, and its sink's latency twice (once in the queue, once in the sink).
    public let bufferDuration: Double
    /// Seconds of audio the server's sink renders ahead of what is heard, asked for: what a flush
    /// cannot take back (a sink that can rewind takes it back when written behind; see `start`).
    public let sinkLatency: Double
    /// Seconds of audio per write: the server asks again when that much has played.
    public let writeDuration: Double
    private let thread = RestartableRouteThread()
    private let rewinds = RewindSignal()
    private let logger = Logger(label: LogLabel.route)
    private let connection = LockedValue<PulseStream?>(nil)

    /// A route to `sink` (nil: the default sink).
    public init(sink: String? = nil, sampleRate: Int = 44_100, channelCount: Int = 2, lookAhead: Double = 4,
                writeDuration: Double = 1, sinkLatency: Double = 0.025) {
        self.sink = sink
        self.name = sink.map { "pulse:" + $0 } ?? "pulse"
        self.format = AudioFormat(sampleRate: sampleRate, channelCount: channelCount)
        // Well past what the server holds, so that the route finds audio queued when it writes.
        self.writeDuration = writeDuration
        self.sinkLatency = sinkLatency
        self.bufferDuration = 2 * (writeDuration + sinkLatency)
        self.preferredLookAhead = max(lookAhead, bufferDuration + 2)
        // Where a flush lets the next write start depends on the sink (a few milliseconds past the
        // frame heard on a null sink); the route starts from 20 ms and learns it from each flush.
        self.clock = RouteClock(sampleRate: sampleRate, rewindMarginFrames: Int64(sampleRate / 50))
    }

    public func start(pullingFrom source: any RouteRenderSource) throws(RouteError) {
        stop(waiting: true) // a route started again: its old thread is woken and gone first
        let stream = try PulseStream(route: name, sink: sink, format: format, requestSeconds: writeDuration, sinkLatencySeconds: sinkLatency)
        connection.value = stream
        let format = format, clock = clock, logger = logger, name = name, rewinds = rewinds
        let sizes = PulseWritePlan.Sizes(sampleRate: format.sampleRate, channelCount: format.channelCount,
                                         writeDuration: writeDuration, bufferDuration: bufferDuration)
        let bufferFrames = Int(Double(format.sampleRate) * (bufferDuration + 0.1))
        rewinds.reset()
        // The driver of a `PulseWritePlan`: waits for the server, hands the plan each event and
        // carries out what it says. The rules are the plan's.
        thread.start(name: "longform.route.pulse", clock: clock) { thread in
            var buffer = [Float](repeating: 0, count: bufferFrames * format.channelCount)
            var plan = PulseWritePlan(sizes: sizes)
            var heardFilter = HeardFrameFilter(sampleRate: format.sampleRate)
            // The clock from the server's last timing report, through the filter, read at now.
            func updateClock() {
                guard let report = stream.timingReport() else { return }
                _ = heardFilter.add(frame: report.frame, heardAt: report.hostTime)
                if let point = heardFilter.point(near: HostClock.now()) { clock.update(frame: point.frame, heardAtHostTime: point.hostTime) }
            }
            do {
                while !thread.shouldStop {
                    let writable = try stream.waitUntilWritable(minimumFrames: plan.minimumWritableFrames)
                    if thread.shouldStop { break }
                    if let target = rewinds.take(), plan.rewindRequested(toFrame: target) == .flush {
                        let heard = clock.isRunning ? clock.currentFrame() : nil
                        let resume = try stream.readFrame()
                        let outcome = plan.flushing(resumingAt: resume, rewindTarget: target, heardFrame: heard, rewindMarginFrames: clock.rewindMarginFrames)
                        if let margin = outcome.rewindMarginFrames { clock.setRewindMarginFrames(margin) }
                        if let target = outcome.resumedAfterRewindTo { source.routeDidResume(atFrame: resume, afterRewindTo: target) }
                        // The write after the flush is rendered first and goes with it: the stream
                        // plays on through a flush, and would play silence while the route rendered.
                        let rewrite = try buffer.withUnsafeMutableBufferPointer { pointer throws(RouteError) -> PulseWritePlan.Write? in
                            let action = plan.roomToWrite(writableFrames: bufferFrames, capacityFrames: bufferFrames, heardFrame: heard ?? resume) {
                                source.queuedFrameCount(fromRouteFrame: $0)
                            }
                            guard case .write(let write) = action else {
                                try stream.flush()
                                return nil
                            }
                            let samples = UnsafeMutableBufferPointer(rebasing: pointer[0..<(write.frameCount * format.channelCount)])
                            plan.fill(samples, for: write) { _ = source.render(into: $0, frameCount: $1, atRouteFrame: $2) }
                            try stream.flush(thenWriting: UnsafeBufferPointer(samples), atFrame: write.startFrame)
                            return write
                        }
                        if let rewrite { plan.wrote(rewrite) }
                        logger.trace("\(name): rewound to frame \(target); the server read at \(resume), written again from \(rewrite?.startFrame ?? resume)")
                        clock.noteFramesRendered(plan.frame)
                        updateClock()
                        continue
                    }
                    let action = plan.roomToWrite(writableFrames: writable, capacityFrames: bufferFrames, heardFrame: clock.currentFrame()) {
                        source.queuedFrameCount(fromRouteFrame: $0)
                    }
                    switch action {
                    case .wait(let frameHeard):
                        // Woken at once by a rewind, which is posted again for the next turn, or
                        // by audio queued (see `sourceDidQueueAudio`); at least 10 ms.
                        let deadline = max(clock.hostTime(ofFrame: frameHeard), HostClock.now() + 10_000_000)
                        if let target = rewinds.wait(untilNanoseconds: deadline) { rewinds.post(frame: target) }
                    case .write(let write):
                        try buffer.withUnsafeMutableBufferPointer { pointer in
                            let samples = UnsafeMutableBufferPointer(rebasing: pointer[0..<(write.frameCount * format.channelCount)])
                            plan.fill(samples, for: write) { _ = source.render(into: $0, frameCount: $1, atRouteFrame: $2) }
                            try stream.write(UnsafeBufferPointer(samples))
                        }
                        plan.wrote(write)
                        clock.noteFramesRendered(plan.frame)
                        updateClock()
                    }
                }
            } catch {
                logger.error("\(name): \(error)")
            }
            // Stopping is immediate: what the server still holds is past the end the timeline reached.
            try? stream.flush()
        }
    }

    /// Renders again from `frame`; see `RewindableRoute`.
    public func rewind(toFrame frame: Int64) {
        rewinds.post(frame: frame)
        connection.value?.interrupt()
    }

    /// Writes the audio just queued at once if the route waits for its low-water mark; see
    /// `RewindableRoute.sourceDidQueueAudio()`.
    public func sourceDidQueueAudio() {
        rewinds.interrupt()
    }

    /// Stops pulling; see `AudioRoute.stop(waiting:)`.
    public func stop(waiting: Bool = true) {
        let stream = connection.value
        thread.stop(waiting: false)
        stream?.interrupt()
        if waiting {
            thread.stop(waiting: true)
            connection.value = nil
        }
    }
}
