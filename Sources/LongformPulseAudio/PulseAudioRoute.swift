import CPulse
import Foundation
import Logging
import LongformCore
import LongformRendering
import LongformRoutes

/// Plays to a PulseAudio server (or PipeWire's pulse server), to its default sink or a named one.
///
/// The server holds a large buffer (`bufferDuration`: two writes, and the sink's latency twice)
/// that the route fills in large writes (`writeDuration`, 1 s), so that it wakes up about once a
/// second; its sink renders only a little of it ahead (`sinkLatency`). A route that keeps time
/// writes a quarter second at a time: its clock places each write about half a second ahead by
/// the device's rate, and the shorter that reach, the less an error in the rate moves what is
/// heard. The route can still take that buffer back: a rewind flushes the stream and writes again
/// from just behind the frame heard (what comes before the frame the rewind asked for, from its
/// copy of what it wrote), so that a pause, a seek or an edit is heard within milliseconds; its
/// `flushBehavior` says whether the stream stops meanwhile. The clock is the server's own account
/// of the frame heard now (the stream's read position less the sink's latency).
public final class PulseAudioRoute: RewindableRoute, @unchecked Sendable {
    /// What a flush keeps: every frame, or each frame's time.
    public enum FlushBehavior: Sendable {
        /// The stream stops at a flush until the route writes again, so that every frame is heard,
        /// late if the route is late; each flush moves the time a frame is heard at by how long
        /// the stream stood still (tens of milliseconds). For a player on its own.
        case keepsEveryFrame
        /// The stream never stops, and the route sends its write with the flush: every frame is
        /// heard at the time the clock gives it, and what comes too late for the sink is silence.
        /// For a speaker in a group, which places its audio by time.
        case keepsTime
    }

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
    /// What a flush keeps.
    public let flushBehavior: FlushBehavior
    private let thread = RestartableRouteThread()
    private let rewinds = RewindSignal()
    private let logger = Logger(label: LogLabel.route)
    private let connection = LockedValue<PulseStream?>(nil)

    /// A route to `sink` (nil: the default sink), writing `writeDuration` seconds at a time (nil:
    /// 1 s, or 0.25 s for a route that `keepsTime`).
    public init(sink: String? = nil, sampleRate: Int = 44_100, channelCount: Int = 2, lookAhead: Double = 4,
                writeDuration: Double? = nil, sinkLatency: Double = 0.025, flushBehavior: FlushBehavior = .keepsEveryFrame) {
        self.sink = sink
        self.flushBehavior = flushBehavior
        self.name = sink.map { "pulse:" + $0 } ?? "pulse"
        self.format = AudioFormat(sampleRate: sampleRate, channelCount: channelCount)
        // A speaker's rooms on one null sink, a room joining: placed 2 s ahead (1 s writes), it
        // played up to 450 µs off the others until its device's rate was known; 0.5 s ahead, 55 µs.
        self.writeDuration = writeDuration ?? (flushBehavior == .keepsTime ? 0.25 : 1)
        self.sinkLatency = sinkLatency
        self.bufferDuration = 2 * (self.writeDuration + sinkLatency)
        // Well past what the server holds, so that the route finds audio queued when it writes.
        self.preferredLookAhead = max(lookAhead, bufferDuration + 2)
        // Where a flush lets the next write start depends on the sink (a few milliseconds past the
        // frame heard on a null sink); the route starts from 20 ms and learns it from each flush.
        self.clock = RouteClock(sampleRate: sampleRate, rewindMarginFrames: Int64(sampleRate / 50))
    }

    public func start(pullingFrom source: any RouteRenderSource) throws(RouteError) {
        stop(waiting: true) // a route started again: its old thread is woken and gone first
        let keepsTime = flushBehavior == .keepsTime
        let stream = try PulseStream(route: name, sink: sink, format: format, requestSeconds: writeDuration, sinkLatencySeconds: sinkLatency,
                                     playsThroughFlushes: keepsTime)
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
            // The clock from the server's timing reports, through the filter, read at now.
            func updateClock() {
                for report in stream.takeTimingReports() { _ = heardFilter.add(frame: report.frame, heardAt: report.hostTime) }
                if let point = heardFilter.point(near: HostClock.now()) { clock.update(frame: point.frame, heardAtHostTime: point.hostTime, rate: point.rate) }
            }
            do {
                while !thread.shouldStop {
                    let writable = try stream.waitUntilWritable(minimumFrames: plan.minimumWritableFrames)
                    if thread.shouldStop { break }
                    if let target = rewinds.take(), plan.rewindRequested(toFrame: target) == .flush {
                        // (The frame heard is the route's clock's, read once the server answered: a
                        // stream that stops at a flush says it is not playing until the next write.)
                        let resume = keepsTime ? try stream.readFrame() : try stream.flushAndWait()
                        let heard = clock.isRunning ? clock.currentFrame() : nil
                        let outcome = plan.flushing(resumingAt: resume, rewindTarget: target, heardFrame: heard, rewindMarginFrames: clock.rewindMarginFrames)
                        if let margin = outcome.rewindMarginFrames { clock.setRewindMarginFrames(margin) }
                        if let target = outcome.resumedAfterRewindTo { source.routeDidResume(atFrame: resume, afterRewindTo: target) }
                        // Keeping time, the write after the flush is rendered first and goes with it:
                        // the stream plays on through a flush, and would play silence while the
                        // route rendered.
                        let rewrite = try buffer.withUnsafeMutableBufferPointer { pointer throws(RouteError) -> PulseWritePlan.Write? in
                            let action = plan.roomToWrite(writableFrames: bufferFrames, capacityFrames: bufferFrames, heardFrame: heard ?? resume) {
                                source.queuedFrameCount(fromRouteFrame: $0)
                            }
                            guard case .write(let write) = action else {
                                if keepsTime { try stream.flush() }
                                return nil
                            }
                            let samples = UnsafeMutableBufferPointer(rebasing: pointer[0..<(write.frameCount * format.channelCount)])
                            plan.fill(samples, for: write) { _ = source.render(into: $0, frameCount: $1, atRouteFrame: $2) }
                            if keepsTime {
                                try stream.flush(thenWriting: UnsafeBufferPointer(samples), atFrame: write.startFrame)
                            } else {
                                try stream.write(UnsafeBufferPointer(samples), atFrame: write.startFrame)
                            }
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
