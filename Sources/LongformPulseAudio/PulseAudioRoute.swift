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
/// (`sinkLatency`). The route can still take that buffer back: a rewind flushes the stream and
/// writes again from the frame the server was about to play (what comes before the frame the
/// rewind asked for, from its copy of what it wrote), so that a pause, a seek or an edit is heard
/// within milliseconds. The clock is the server's own account of the frame heard now (the
/// stream's read position less the sink's latency).
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
        let writeFrames = Int(Double(format.sampleRate) * writeDuration)
        // After a flush the first write is short, so that it is heard at once, and the rest
        // follows at once. A tenth of a second, not less: the server runs dry if rendering the
        // rest takes longer than the first write lasts, and under load it took over 10 ms (a
        // gap, or, before the stream prebuffered, frames lost). Rendering a tenth takes microseconds.
        let firstWriteFrames = format.sampleRate / 10
        let safetyFrames = Int64(format.sampleRate / 1000), maximumMarginFrames = Int64(format.sampleRate / 10)
        // Written ahead of the frame heard, whether or not audio is queued for it: what keeps the
        // server from running dry while the renderer is still being filled.
        let lowWaterFrames = Int64(format.sampleRate / 10)
        rewinds.reset()
        thread.start(name: "longform.route.pulse", clock: clock) { thread in
            var buffer = [Float](repeating: 0, count: Int(Double(format.sampleRate) * (self.bufferDuration + 0.1)) * format.channelCount)
            var frame: Int64 = 0 // the next frame to write
            // What was written, for the frames a flush resumes at before a rewind's target: those
            // are written again as they were, up to `replayEnd` (see `FrameHistory`). The server
            // holds no more than its buffer (`bufferDuration`); the second more is slack.
            var history = FrameHistory(capacityFrames: Int(Double(format.sampleRate) * (self.bufferDuration + 1)), channelCount: format.channelCount)
            var replayEnd: Int64 = 0
            var framesBehindEnd = 0 // how far before the server's write index the next write goes
            var isRefilling = true
            var heardFilter = HeardFrameFilter(sampleRate: format.sampleRate)
            // The clock from the server's last timing report, through the filter, read at now.
            func updateClock() {
                guard let report = stream.timingReport() else { return }
                _ = heardFilter.add(frame: report.frame, heardAt: report.hostTime)
                if let point = heardFilter.point(near: HostClock.now()) { clock.update(frame: point.frame, heardAtHostTime: point.hostTime) }
            }
            do {
                while !thread.shouldStop {
                    let writable = try stream.waitUntilWritable(minimumFrames: isRefilling ? 1 : writeFrames)
                    if thread.shouldStop { break }
                    let rewind = rewinds.take()
                    // The end of what the server holds: past `frame` while a write behind it is pending.
                    let serverEnd = frame + Int64(framesBehindEnd)
                    // A rewind to frames not written yet still ends a replay pending there: they render anew.
                    if let target = rewind, target >= serverEnd { replayEnd = min(replayEnd, target) }
                    if let target = rewind, target < serverEnd {
                        // The server plays on from what it was about to play: everything from there is written again.
                        let resume = try stream.flush()
                        logger.trace("\(name): rewound to frame \(target); the server resumes at \(resume), \(serverEnd - resume) frames written again")
                        if clock.isRunning {
                            // The server cannot take back what its sink already has: learn how far
                            // ahead of the frame heard that reaches, so that the next change is placed
                            // past it. A reach beyond reason (a server still starting) is not learnt.
                            // (The frame heard is the route's clock's: the stream waits for the next
                            // write after a flush, so the flush's own timing says it is not playing.)
                            let reach = resume - clock.currentFrame() + safetyFrames
                            let margin = clock.rewindMarginFrames ?? reach
                            if reach <= maximumMarginFrames { clock.setRewindMarginFrames(reach > margin ? reach : (3 * margin + reach) / 4) }
                        }
                        // Normally before `frame`. (Past it only if the server read on past what was
                        // written, which its prebuffering prevents; then the route's frames follow.)
                        replayEnd = resume < target && history.holds(resume..<target) ? target : resume
                        frame = resume
                        framesBehindEnd = 0
                        // The first write starts a little behind the frame heard now, with what was
                        // written there: behind the server's read index, so that a sink that can rewind
                        // takes back what it rendered ahead and renders again at once (else the change
                        // waits for its next block), as it does when a stream that ran dry is written
                        // to. The audio is what it had, so a sink that cannot rewind loses nothing.
                        if clock.isRunning {
                            let behind = clock.currentFrame() - 2 * safetyFrames
                            // (`replayEnd` is already at or past `resume`: from `behind` to there is all a replay.)
                            if behind < resume && history.holds(behind..<resume) {
                                framesBehindEnd = Int(resume - behind)
                                frame = behind
                            }
                        }
                        if resume > target { source.routeDidResume(atFrame: resume, afterRewindTo: target) }
                        clock.noteFramesRendered(resume)
                        isRefilling = true
                        continue
                    }
                    var count = min(writable, buffer.count / format.channelCount)
                    if isRefilling {
                        count = min(count, firstWriteFrames)
                        isRefilling = false
                    }
                    // A write that would not reach the server's read index again is not sent behind
                    // it: a sink that rewound for it would run dry until the next write.
                    if framesBehindEnd > 0 && count <= framesBehindEnd {
                        frame += Int64(framesBehindEnd)
                        framesBehindEnd = 0
                    }
                    // Frames before a rewind's target first, from what was written; then what the renderer has queued.
                    let replayFrames = Int(max(0, min(replayEnd - frame, Int64(count))))
                    if let queued = source.queuedFrameCount(fromRouteFrame: frame + Int64(replayFrames)) {
                        let needed = lowWaterFrames - (frame - clock.currentFrame())
                        count = min(count, Int(max(Int64(replayFrames) + queued, needed, 0)))
                    }
                    guard count > 0 else {
                        // Enough is written and the rest is still being enqueued (or nothing plays):
                        // look again when the server is down to half the low-water mark, and top it
                        // up then, or at once on a rewind. Half, not all of it: paused or stopped,
                        // the route wakes 20 times a second instead of 100.
                        let halfLowWater = clock.hostTime(ofFrame: frame - lowWaterFrames / 2)
                        if let target = rewinds.wait(untilNanoseconds: max(halfLowWater, HostClock.now() + 10_000_000)) { rewinds.post(frame: target) }
                        continue
                    }
                    try buffer.withUnsafeMutableBufferPointer { pointer in
                        let slice = UnsafeMutableBufferPointer(rebasing: pointer[0..<(count * format.channelCount)])
                        let replayed = history.copy(from: frame, count: replayFrames, into: slice) ? replayFrames : 0
                        if replayed < count {
                            let rendered = UnsafeMutableBufferPointer(rebasing: slice[(replayed * format.channelCount)...])
                            _ = source.render(into: rendered, frameCount: count - replayed, atRouteFrame: frame + Int64(replayed))
                            // Only what was rendered: replayed frames are in the history already, and
                            // recording them would drop the rest of the replay from it.
                            history.record(UnsafeBufferPointer(rendered), at: frame + Int64(replayed))
                        }
                        try stream.write(UnsafeBufferPointer(slice), fromFramesBeforeEnd: framesBehindEnd)
                        framesBehindEnd = 0
                    }
                    frame += Int64(count)
                    clock.noteFramesRendered(frame)
                    updateClock()
                }
            } catch {
                logger.error("\(name): \(error)")
            }
            // Stopping is immediate: what the server still holds is past the end the timeline reached.
            _ = try? stream.flush()
        }
    }

    /// Renders again from `frame`; see `RewindableRoute`.
    public func rewind(toFrame frame: Int64) {
        rewinds.post(frame: frame)
        connection.value?.interrupt()
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
