import CPulse
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LongformCore
import LongformRendering

/// A PulseAudio playback stream on libpulse's threaded mainloop: owns the mainloop, the context,
/// the stream and its report timer, and frees them in `deinit`. Every call takes the mainloop's
/// lock; the stream's callbacks wake the thread that waits in `waitUntilWritable`, and keep the
/// timing reports for `takeTimingReports`.
///
/// Frames are counted by the stream's write index from its first frame: the first frame written is
/// that one (0 unless `setFirstFrame` says otherwise: a stream opened again after one failed goes
/// on from the route's frame), and a flush sets the next one back to the frame the server was
/// about to play.
final class PulseStream: @unchecked Sendable {
    private let mainloop: OpaquePointer
    private var context: OpaquePointer?
    private var stream: OpaquePointer?
    private let route: String
    /// The server and the sink the stream plays to, as the server names them once it is open
    /// ("SERVER SINK"; set once, before the initializer returns): what a device's rate is kept under.
    private(set) var device = ""
    private let frameBytes: Int
    private let sampleRate: Int
    /// The frame the stream's first byte is: frames are the write index's, offset by this.
    private var firstFrame: Int64 = 0 // guarded by the mainloop lock
    /// Set by `interrupt()`, cleared by the waiter: another thread has something for the route's thread.
    private var isInterrupted = false // guarded by the mainloop lock
    /// Whether the stream waits for its first write: one that plays through flushes opens corked,
    /// and plays from that write on.
    private var isCorked: Bool // guarded by the mainloop lock
    /// The sink's latency in the last timing report, in frames: how far the server's read index
    /// is ahead of the frame heard.
    private var lastSinkLatencyFrames: Int64? // guarded by the mainloop lock
    /// How many times the server ran dry (played silence for want of a write) since the stream opened.
    private var underflowCount = 0 // guarded by the mainloop lock
    /// Timing reports not yet taken, oldest first.
    private var pendingReports: [(frame: Int64, hostTime: UInt64)] = [] // guarded by the mainloop lock
    /// Asks for timing reports every `reportInterval` while a stream that plays through flushes
    /// plays (a stream that stops at flushes has one with each write).
    private var reportTimer: OpaquePointer?
    /// Microseconds between two timing reports asked for: the filter keeps the lowest of each
    /// half second and fits the last ten seconds', so it needs them this often all along (with a
    /// minute's window, only for a stream's first 30 s).
    static let reportInterval: pa_usec_t = 100_000
    /// Reports kept for the route at most: ten seconds' worth.
    static let maximumPendingReports = 100
    /// Timing requests nobody waits for, not yet answered (with the lock held).
    private var unansweredReports: [OpaquePointer] = []
    /// Unanswered timing requests asked for at most: libpulse keeps a slot for each request in
    /// flight and refuses a 33rd with "Internal error", which ended the route when the refused
    /// one was a request the route waits for (behind a slow server, asked with each write).
    static let maximumUnansweredReports = 8

    /// Connects to the server and opens a stream to `sink` (nil: the default) that asks for more
    /// whenever `requestSeconds` are free, holds two of those, and asks the sink to render no more
    /// than `sinkLatencySeconds` ahead; one that `playsThroughFlushes`, or stops at each until the
    /// next write.
    init(route: String, sink: String?, format: AudioFormat, requestSeconds: Double, sinkLatencySeconds: Double, playsThroughFlushes: Bool,
         timeoutSeconds: Double = 5) throws(RouteError) {
        self.route = route
        isCorked = playsThroughFlushes
        frameBytes = format.channelCount * MemoryLayout<Float>.size
        sampleRate = format.sampleRate
        guard let mainloop = pa_threaded_mainloop_new() else { throw RouteError(route: route, reason: "cannot create a PulseAudio mainloop") }
        self.mainloop = mainloop
        // From here on `deinit` frees the mainloop, also when the initializer throws.
        guard pa_threaded_mainloop_start(mainloop) >= 0 else { throw RouteError(route: route, reason: "cannot start a PulseAudio mainloop") }
        lock()
        defer { unlock() }
        // Callbacks carry the mainloop, and only wake whoever waits on it.
        let userdata = UnsafeMutableRawPointer(mainloop)
        context = pa_context_new(pa_threaded_mainloop_get_api(mainloop), "longform")
        guard let context else { throw RouteError(route: route, reason: "cannot create a PulseAudio context") }
        pa_context_set_state_callback(context, { _, userdata in pa_threaded_mainloop_signal(OpaquePointer(userdata), 0) }, userdata)
        guard pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else { throw contextError() }
        let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
        while pa_context_get_state(context) != PA_CONTEXT_READY {
            let state = pa_context_get_state(context)
            if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED { throw contextError() }
            if Date() > deadline { throw RouteError(route: route, reason: "the PulseAudio server did not answer within \(timeoutSeconds) s") }
            pa_threaded_mainloop_wait(mainloop)
        }

        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(format.sampleRate), channels: UInt8(format.channelCount))
        guard let stream = pa_stream_new(context, "playback", &spec, nil) else { throw contextError() }
        self.stream = stream
        pa_stream_set_state_callback(stream, { _, userdata in pa_threaded_mainloop_signal(OpaquePointer(userdata), 0) }, userdata)
        pa_stream_set_write_callback(stream, { _, _, userdata in pa_threaded_mainloop_signal(OpaquePointer(userdata), 0) }, userdata)
        let bytesPerSecond = Double(format.sampleRate * frameBytes)
        func bytes(_ seconds: Double) -> UInt32 { UInt32(bytesPerSecond * seconds) / UInt32(frameBytes) * UInt32(frameBytes) }
        // Playing through flushes, no prebuffering: the stream plays from the first write and never
        // stops, so that every frame is heard at the time the clock's line gives it, through
        // flushes and underruns alike. A write that comes late lands behind the read index: the
        // sink rewinds for it if it can, and the rest is silence heard in its place (so the flush
        // goes with its write: `flush(thenWriting:atFrame:)`).
        // Otherwise one frame of prebuffering: a flush (or running dry) holds the server's read
        // index until the next write, so that a write that comes late is heard late, not lost;
        // but each flush moves the frame heard at a time by how long the stream stood still (11 to
        // 86 ms on a null sink), which its reports show only later: speakers in a group started
        // out of step.
        // With PA_STREAM_ADJUST_LATENCY the server asks the sink for a latency of half of what the
        // stream's target holds beyond two requests, and queues the target less what the sink
        // got: two requests and the sink's latency in the queue, the sink's latency in the sink.
        // The sink's latency is what a flush cannot take back: with 1 s requests in 4 s, a sink
        // nobody else asked for less rendered 1 s ahead, and a change was heard up to a second
        // late (without adjusting, a fresh null sink renders 2 s ahead).
        var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: bytes(2 * (requestSeconds + sinkLatencySeconds)),
                                        prebuf: playsThroughFlushes ? 0 : UInt32(frameBytes),
                                        minreq: bytes(requestSeconds), fragsize: UInt32.max)
        // Timing is asked for with each write and, playing through flushes, ten times a second
        // (see `askForTimingReport`).
        // Playing through flushes, corked until the first write (see `send`): uncorked, the stream
        // would play silence meanwhile, and the first write would land behind its read index.
        let corked = playsThroughFlushes ? PA_STREAM_START_CORKED.rawValue : 0
        let flags = pa_stream_flags_t(PA_STREAM_INTERPOLATE_TIMING.rawValue | PA_STREAM_ADJUST_LATENCY.rawValue | corked)
        guard pa_stream_connect_playback(stream, sink, &attributes, flags, nil, nil) >= 0 else { throw contextError() }
        while pa_stream_get_state(stream) != PA_STREAM_READY {
            if pa_stream_get_state(stream) == PA_STREAM_FAILED { throw contextError() }
            if Date() > deadline { throw RouteError(route: route, reason: "the PulseAudio stream did not open within \(timeoutSeconds) s") }
            pa_threaded_mainloop_wait(mainloop)
        }
        let server = pa_context_get_server(context).map { String(cString: $0) } ?? "default"
        device = server + " " + (pa_stream_get_device_name(stream).map { String(cString: $0) } ?? sink ?? "default")
        // Unretained: `deinit` stops both before the stream goes, under the lock they run under.
        // Nor retained while one runs: the release at its end could be the last one, and run
        // `deinit` on the mainloop's thread, which cannot take the mainloop's lock (PulseAudio
        // aborts the process).
        let this = Unmanaged.passUnretained(self).toOpaque()
        pa_stream_set_latency_update_callback(stream, { _, userdata in
            guard let userdata else { return }
            Unmanaged<PulseStream>.fromOpaque(userdata)._withUnsafeGuaranteedRef { $0.keepTimingReport() }
        }, this)
        pa_stream_set_underflow_callback(stream, { _, userdata in
            guard let userdata else { return }
            Unmanaged<PulseStream>.fromOpaque(userdata)._withUnsafeGuaranteedRef { $0.underflowCount += 1 }
        }, this)
        if playsThroughFlushes {
            reportTimer = pa_context_rttime_new(context, pa_rtclock_now() + Self.reportInterval, { _, event, _, userdata in
                guard let userdata else { return }
                Unmanaged<PulseStream>.fromOpaque(userdata)._withUnsafeGuaranteedRef { $0.askForTimingReport(restarting: event) }
            }, this)
        }
    }

    deinit {
        lock()
        if let reportTimer { pa_threaded_mainloop_get_api(mainloop).pointee.time_free(reportTimer) }
        unansweredReports.forEach { pa_operation_unref($0) }
        if let stream {
            pa_stream_set_latency_update_callback(stream, nil, nil)
            pa_stream_set_underflow_callback(stream, nil, nil)
            pa_stream_disconnect(stream)
            pa_stream_unref(stream)
        }
        if let context {
            pa_context_disconnect(context)
            pa_context_unref(context)
        }
        unlock()
        pa_threaded_mainloop_stop(mainloop)
        pa_threaded_mainloop_free(mainloop)
    }

    private func lock() { pa_threaded_mainloop_lock(mainloop) }
    private func unlock() { pa_threaded_mainloop_unlock(mainloop) }

    private func contextError() -> RouteError {
        RouteError(route: route, reason: String(cString: pa_strerror(context.map { pa_context_errno($0) } ?? Int32(PA_ERR_UNKNOWN.rawValue))))
    }

    /// Numbers the stream's frames from `frame` (0 until called): the first frame written is that
    /// one. Called before the first write, by a route that opens a stream again where the failed
    /// one left off, once the new one is open (the frame due then is known only then).
    func setFirstFrame(_ frame: Int64) {
        lock()
        firstFrame = frame
        unlock()
    }

    /// Waits until the server takes at least `minimumFrames` frames, or `interrupt()` is called;
    /// returns the frames it takes now (0 when interrupted before there was room).
    func waitUntilWritable(minimumFrames: Int) throws(RouteError) -> Int {
        lock()
        defer { unlock() }
        while true {
            guard let stream, pa_stream_get_state(stream) == PA_STREAM_READY else { throw RouteError(route: route, reason: "the stream failed: \(contextError().reason)") }
            let writable = pa_stream_writable_size(stream)
            if writable < 0 { throw contextError() } // (size_t) -1
            let frames = writable / frameBytes
            if isInterrupted {
                isInterrupted = false
                return frames
            }
            if frames >= minimumFrames { return frames }
            pa_threaded_mainloop_wait(mainloop)
        }
    }

    /// Wakes the thread waiting in `waitUntilWritable`, from any other thread.
    func interrupt() {
        lock()
        isInterrupted = true
        pa_threaded_mainloop_signal(mainloop, 0)
        unlock()
    }

    /// Hands interleaved Float32 frames to the server, after what it holds or (`frame`) as frames
    /// from that one on: what it held there is replaced, and where that is behind its read index,
    /// taken back from its sink and rendered again if the sink can rewind.
    func write(_ samples: UnsafeBufferPointer<Float>, atFrame frame: Int64? = nil) throws(RouteError) {
        lock()
        defer { unlock() }
        if let frame { try send(samples, seekingTo: byteOffset(ofFrame: frame), PA_SEEK_ABSOLUTE) } else { try send(samples, seekingTo: 0, PA_SEEK_RELATIVE) }
        askForTimingReport()
    }

    /// The frame the server is about to play: its read index, asked for now (one round trip).
    func readFrame() throws(RouteError) -> Int64 {
        lock()
        defer { unlock() }
        return try awaitTimingReport().read_index / Int64(frameBytes) + firstFrame
    }

    /// The write index's byte offset of `frame`.
    private func byteOffset(ofFrame frame: Int64) -> Int64 { (frame - firstFrame) * Int64(frameBytes) }

    /// Drops what the server holds and has not played, and waits for it; returns the frame the
    /// next write is played as (the server's write index, now back at the frame it was about to
    /// play). A stream that stops at flushes waits there for that write (see `init`).
    func flushAndWait() throws(RouteError) -> Int64 {
        lock()
        defer { unlock() }
        guard let stream else { throw contextError() }
        // Both requests go out at once and only the second is waited for: the server answers in
        // order, so the timing that comes back is the one after the flush (one round trip, not two).
        guard let flushing = pa_stream_flush(stream, nil, nil) else { throw contextError() }
        pa_operation_unref(flushing)
        return try awaitTimingReport().write_index / Int64(frameBytes) + firstFrame
    }

    /// Asks for a timing report and waits for it (with the lock held); returns it.
    private func awaitTimingReport() throws(RouteError) -> pa_timing_info {
        guard let stream else { throw contextError() }
        try runToCompletion(pa_stream_update_timing_info(stream, { _, _, userdata in pa_threaded_mainloop_signal(OpaquePointer(userdata), 0) }, UnsafeMutableRawPointer(mainloop)))
        guard let timing = pa_stream_get_timing_info(stream) else { throw contextError() }
        return timing.pointee
    }

    /// Asks for a timing report that nobody waits for (with the lock held): it reaches the route
    /// through `keepTimingReport`; nothing when it cannot be asked for, or when
    /// `maximumUnansweredReports` are still in flight (their answers are reports enough).
    private func askForTimingReport() {
        unansweredReports.removeAll { operation in
            guard pa_operation_get_state(operation) != PA_OPERATION_RUNNING else { return false }
            pa_operation_unref(operation)
            return true
        }
        guard unansweredReports.count < Self.maximumUnansweredReports, let stream,
              let operation = pa_stream_update_timing_info(stream, nil, nil) else { return }
        unansweredReports.append(operation)
    }

    /// Drops what the server holds and has not played and, in the same breath, hands it `samples`
    /// (interleaved Float32, if any) as frames from `frame` on. Frames written behind the server's
    /// read index are taken back from its sink and rendered again, where the sink can rewind. For
    /// a stream that plays through flushes (see `init`): were the write sent after the flush's
    /// answer, the sink would play silence for as long as that took.
    func flush(thenWriting samples: UnsafeBufferPointer<Float>? = nil, atFrame frame: Int64 = 0) throws(RouteError) {
        lock()
        defer { unlock() }
        guard let stream, let flushing = pa_stream_flush(stream, nil, nil) else { throw contextError() }
        pa_operation_unref(flushing)
        if let samples { try send(samples, seekingTo: byteOffset(ofFrame: frame), PA_SEEK_ABSOLUTE) }
        askForTimingReport()
    }

    /// Sends `samples` at `offset` bytes by `mode` (with the lock held), and starts the stream
    /// with its first write.
    private func send(_ samples: UnsafeBufferPointer<Float>, seekingTo offset: Int64, _ mode: pa_seek_mode_t) throws(RouteError) {
        guard let stream, pa_stream_write(stream, samples.baseAddress, samples.count * MemoryLayout<Float>.size, nil, offset, mode) >= 0 else {
            throw contextError()
        }
        if isCorked, !samples.isEmpty {
            guard let uncorking = pa_stream_cork(stream, 0, nil, nil) else { throw contextError() }
            pa_operation_unref(uncorking)
            isCorked = false
        }
    }

    /// How many frames the server had read ahead of the frame heard (its sink's latency) at the
    /// last timing report; nil before the first. Still known after the stream failed: the frames
    /// up to there were played.
    var sinkLatencyFrames: Int64? {
        lock()
        defer { unlock() }
        return lastSinkLatencyFrames
    }

    /// How many times the server ran dry since the stream opened: played silence because the
    /// writes came late (a route that keeps time loses those frames).
    var underflows: Int {
        lock()
        defer { unlock() }
        return underflowCount
    }

    /// The timing reports that came since the last call, oldest first, each as "this frame is
    /// heard at this host time".
    func takeTimingReports() -> [(frame: Int64, hostTime: UInt64)] {
        lock()
        defer { unlock() }
        defer { pendingReports.removeAll(keepingCapacity: true) }
        return pendingReports
    }

    /// Asks for a timing report, and again an interval later (in the mainloop, lock held). The
    /// route's filter follows the reports' lower edge: ten a second make that edge out within
    /// microseconds, where one a second (with each write) left a room's line tens of microseconds
    /// from another's, and their rates as many ppm apart, for their first 20 s.
    private func askForTimingReport(restarting event: OpaquePointer?) {
        if let stream, !isCorked, pa_stream_get_state(stream) == PA_STREAM_READY { askForTimingReport() }
        if let context, let event { pa_context_rttime_restart(context, event, pa_rtclock_now() + Self.reportInterval) }
    }

    /// Keeps the timing report that just came (in the mainloop, lock held).
    private func keepTimingReport() {
        guard let report = timingReport() else { return }
        if let last = pendingReports.last, last.frame == report.frame { return }
        if pendingReports.count >= Self.maximumPendingReports { pendingReports.removeFirst() }
        pendingReports.append(report)
    }

    /// The server's last timing report as "this frame is heard at this host time", read from the
    /// report itself (its read index less the sink's latency, at the time the server took it)
    /// rather than through libpulse's interpolation, whose smoother wanders by hundreds of
    /// microseconds, differently for each stream (two speakers on one sink drifted apart by that
    /// much). Nil while the stream is not playing or libpulse marks its read index unknown. Keeps
    /// the report's sink latency (`sinkLatencyFrames`). With the lock held.
    private func timingReport() -> (frame: Int64, hostTime: UInt64)? {
        guard let stream, let timing = pa_stream_get_timing_info(stream), timing.pointee.playing != 0,
              timing.pointee.read_index_corrupt == 0 else { return nil }
        let report = timing.pointee
        // The frame heard then, to a fraction: the next whole frame is heard that much later.
        // (The sink's latency in whole frames, rounded down, gave that next frame the time of the
        // exact position: every report early by up to a frame.)
        let latency = Double(report.sink_usec) * Double(sampleRate) / 1e6
        let heard = Double(report.read_index / Int64(frameBytes) + firstFrame) - latency
        lastSinkLatencyFrames = Int64(latency.rounded())
        let frame = Int64(heard.rounded(.up))
        let fraction = Int64(((Double(frame) - heard) * 1e9 / Double(sampleRate)).rounded())
        // The report's time is on the wall clock; the route's clocks are on the host clock.
        let taken = HostClock.hostTime(ofRealTime: Int64(report.timestamp.tv_sec) * 1_000_000_000 + Int64(report.timestamp.tv_usec) * 1_000)
        return (frame, UInt64(max(0, Int64(taken) + fraction)))
    }

    /// Waits (with the lock held) for an operation to finish.
    private func runToCompletion(_ operation: OpaquePointer?) throws(RouteError) {
        guard let operation else { throw contextError() }
        defer { pa_operation_unref(operation) }
        while pa_operation_get_state(operation) == PA_OPERATION_RUNNING {
            guard let stream, pa_stream_get_state(stream) == PA_STREAM_READY else { throw contextError() }
            pa_threaded_mainloop_wait(mainloop)
        }
    }
}
