import CPulse
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
    /// Where the device's rate is kept for its next stream (nil: nowhere; each stream starts at the nominal rate).
    public let rateMemory: DeviceRateMemory?
    private let thread = RestartableRouteThread()
    private let rewinds = RewindSignal()
    private let logger = Logger(label: LogLabel.route)
    private let connection = LockedValue<PulseStream?>(nil)

    /// A route to `sink` (nil: the default sink), writing `writeDuration` seconds at a time (nil:
    /// 1 s, or 0.25 s for a route that `keepsTime`); with a `rateMemory`, each stream starts at its
    /// device's rate as last measured, and the rate it measures is kept there.
    public init(sink: String? = nil, sampleRate: Int = 44_100, channelCount: Int = 2, lookAhead: Double = 4,
                writeDuration: Double? = nil, sinkLatency: Double = 0.025, flushBehavior: FlushBehavior = .keepsEveryFrame,
                rateMemory: DeviceRateMemory? = nil) {
        self.sink = sink
        self.flushBehavior = flushBehavior
        self.rateMemory = rateMemory
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
        let format = format, clock = clock, logger = logger, name = name, rewinds = rewinds, connection = connection, rateMemory = rateMemory
        let sizes = PulseWritePlan.Sizes(sampleRate: format.sampleRate, channelCount: format.channelCount,
                                         writeDuration: writeDuration, bufferDuration: bufferDuration)
        let bufferFrames = Int(Double(format.sampleRate) * (bufferDuration + 0.1))
        let sinkLatencyFrames = Int64(Double(format.sampleRate) * sinkLatency)
        let openStream = { @Sendable [sink, writeDuration, sinkLatency] () throws(RouteError) -> PulseStream in
            try PulseStream(route: name, sink: sink, format: format, requestSeconds: writeDuration, sinkLatencySeconds: sinkLatency,
                            playsThroughFlushes: keepsTime)
        }
        // A stream that cannot open at the start is the caller's error; one that fails later is
        // opened again by the route's thread (see `reopenedStream`).
        let opened = try openStream()
        connection.value = opened
        // A device's rate as measured before starts the filter's line, until the stream's own
        // fit is trusted: a speaker joining rooms already playing on a sink 41 ppm fast, at the
        // nominal rate for its first 4 s, drifted 41 µs a second from them. The rate kept is
        // the filter's once settled (20 s into a stream), then as it moves (`Schedule`). Read
        // here, so that the route's thread never waits on the disk.
        let openedDeviceKey = Self.rateKey(of: opened, sampleRate: format.sampleRate)
        let rememberedRate = rateMemory?.rate(ofDevice: openedDeviceKey)
        if let rememberedRate {
            logger.info("\(name): starting at the device's rate as last measured, \(String(cFormat: "%+.1f", (rememberedRate - 1) * 1e6)) ppm, until this stream's own is known")
        }
        rewinds.reset()
        // The driver of a `PulseWritePlan`: waits for the server, hands the plan each event and
        // carries out what it says. The rules are the plan's.
        thread.start(name: "longform.route.pulse", clock: clock) { thread in
            guard var stream = connection.value else { return }
            var openedAt = HostClock.now()
            var buffer = [Float](repeating: 0, count: bufferFrames * format.channelCount)
            var plan = PulseWritePlan(sizes: sizes)
            var deviceKey = openedDeviceKey
            var heardFilter = HeardFrameFilter(sampleRate: format.sampleRate, rememberedRate: rememberedRate)
            var rateSchedule = DeviceRateMemory.Schedule()
            // The clock from the server's timing reports, through the filter, read at now. A move
            // of the line of 50 µs or more at once, or of its rate by 20 ppm, is logged (each report
            // at trace level): a room out of step in its first seconds was traced to one.
            var underflowsLogged = 0
            func updateClock() {
                // A room silent for 10 ms in its first second was not traced: a run dry is logged.
                let underflows = stream.underflows
                if underflows > underflowsLogged {
                    underflowsLogged = underflows
                    logger.debug("\(name): the server ran dry (underflow \(underflowsLogged) of this stream); the frame heard is \(clock.isRunning ? String(clock.currentFrame()) : "not known yet")")
                }
                for report in stream.takeTimingReports() {
                    let lineTime = heardFilter.add(frame: report.frame, heardAt: report.hostTime)
                    logger.trace("\(name): frame \(report.frame) heard at \(report.hostTime) ns; the line gives \(lineTime)")
                }
                if let rateMemory, let trusted = heardFilter.settledRate, rateSchedule.shouldRemember(trusted, at: HostClock.now()) {
                    rateMemory.remember(trusted, ofDevice: deviceKey)
                }
                guard let point = heardFilter.point(near: HostClock.now()) else { return }
                if clock.isRunning {
                    let move = Int64(point.hostTime) - Int64(clock.hostTime(ofFrame: point.frame))
                    if abs(move) >= 50_000 || abs(point.rate - clock.rate) > 20e-6 {
                        logger.debug("\(name): the frame heard moved \(move / 1_000) µs, rate \(String(cFormat: "%+.1f", (clock.rate - 1) * 1e6)) → \(String(cFormat: "%+.1f", (point.rate - 1) * 1e6)) ppm")
                    }
                }
                clock.update(frame: point.frame, heardAtHostTime: point.hostTime, rate: point.rate)
            }
            // Keeping time, a stream opened again plays silence until its first timing report: the
            // time its first frame is heard is known only then (15 to 20 ms later than the last
            // report's latency on a null sink; audio placed by a guess played that far off the
            // other rooms for 0.3 s).
            var isSilentUntilTheClockRuns = false
            func render(_ samples: UnsafeMutableBufferPointer<Float>, frameCount: Int, atRouteFrame frame: Int64) {
                if isSilentUntilTheClockRuns && !clock.isRunning {
                    samples.update(repeating: 0)
                } else {
                    isSilentUntilTheClockRuns = false
                    _ = source.render(into: samples, frameCount: frameCount, atRouteFrame: frame)
                }
            }
            // Writes until the route stops (returns) or the stream fails (throws).
            func play() throws(RouteError) {
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
                            plan.fill(samples, for: write, render: render)
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
                        try buffer.withUnsafeMutableBufferPointer { pointer throws(RouteError) in
                            let samples = UnsafeMutableBufferPointer(rebasing: pointer[0..<(write.frameCount * format.channelCount)])
                            plan.fill(samples, for: write, render: render)
                            try stream.write(UnsafeBufferPointer(samples))
                        }
                        plan.wrote(write)
                        clock.noteFramesRendered(plan.frame)
                        updateClock()
                    }
                }
            }
            while true {
                do throws(RouteError) {
                    try play()
                    break
                } catch {
                    if thread.shouldStop { break }
                    logger.error("\(name): \(error.reason); opening the stream again")
                    // Keeping every frame, the clock stands at the frame heard, and the new stream
                    // goes on from the one the server was about to play (the sink's latency, as
                    // last reported, further); keeping time, it runs on until the new stream (corked
                    // until its first write) opens, which starts at the frame due when it plays.
                    if !keepsTime { clock.standStill() }
                    let failedAt = HostClock.now()
                    let latencyFrames = stream.sinkLatencyFrames ?? sinkLatencyFrames
                    let stoppedFrame = min(plan.frame, clock.currentFrame() + latencyFrames)
                    // A stream that fails within a second of opening is not opened again at once:
                    // a server that kills every new stream would have the thread spin.
                    let firstDelay: UInt64 = failedAt - openedAt < 1_000_000_000 ? 1_000_000_000 : 0
                    guard let reopening = Self.reopenedStream(thread: thread, rewinds: rewinds, logger: logger, name: name, firstDelay: firstDelay, open: { () throws(RouteError) in
                        let opened = try openStream()
                        let resume = keepsTime && clock.isRunning ? clock.currentFrame() + latencyFrames : stoppedFrame
                        opened.setFirstFrame(resume)
                        return (opened, resume)
                    }) else { break }
                    let (reopened, resume) = reopening
                    openedAt = HostClock.now()
                    stream = reopened
                    connection.value = reopened
                    underflowsLogged = 0
                    deviceKey = Self.rateKey(of: reopened, sampleRate: format.sampleRate)
                    // (Keeping time, what was written was placed by the old stream's clock.)
                    plan.streamReopened(resumingAt: resume, replaysWhatWasWritten: !keepsTime)
                    heardFilter.streamRestarted()
                    // Keeping time too, the clock stands until the new stream's first report: what a
                    // speaker placed meanwhile is placed again once its clock runs.
                    clock.standStill()
                    isSilentUntilTheClockRuns = keepsTime
                    clock.noteFramesRendered(plan.frame)
                    let seconds = Double(HostClock.now() - failedAt) / 1e9
                    logger.info("\(name): the stream is open again after \(String(cFormat: "%.2f", seconds)) s, from frame \(resume)")
                }
            }
            // Stopping is immediate: what the server still holds is past the end the timeline reached.
            try? stream.flush()
            if let rateMemory, let trusted = heardFilter.settledRate, rateSchedule.hasChanged(trusted) {
                rateMemory.remember(trusted, ofDevice: deviceKey)
            }
        }
    }

    /// The key `stream`'s device's rate is kept under: the server, the sink and the sample rate.
    private static func rateKey(of stream: PulseStream, sampleRate: Int) -> String {
        "pulse \(stream.device) \(sampleRate) Hz"
    }

    /// A stream opened by `open` (with the frame it starts at) after `firstDelay` nanoseconds,
    /// tried again after 50 ms, then twice as long each time up to 2 s, until it opens or the
    /// route stops (nil). Rewinds posted meanwhile are posted again for the new stream.
    private static func reopenedStream(thread: RouteThread, rewinds: RewindSignal, logger: Logger, name: String, firstDelay: UInt64,
                                       open: () throws(RouteError) -> (PulseStream, Int64)) -> (PulseStream, Int64)? {
        var delay = firstDelay
        var heldRewind: Int64?
        var lastReason: String?
        defer { if let heldRewind { rewinds.post(frame: heldRewind) } }
        while !thread.shouldStop {
            let deadline = HostClock.now() + delay
            while !thread.shouldStop && HostClock.now() < deadline {
                if let target = rewinds.wait(untilNanoseconds: deadline) { heldRewind = min(heldRewind ?? target, target) }
            }
            if thread.shouldStop { break }
            do {
                return try open()
            } catch {
                // Said once per reason: a server that is gone is tried every 2 s for as long as it takes.
                if error.reason != lastReason { logger.warning("\(name): cannot open the stream again: \(error.reason); trying again") }
                lastReason = error.reason
            }
            delay = max(50_000_000, min(2 * delay, 2_000_000_000))
        }
        return nil
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
        rewinds.interrupt() // a thread waiting to open its stream again
        if waiting {
            thread.stop(waiting: true)
            connection.value = nil
        }
    }
}
