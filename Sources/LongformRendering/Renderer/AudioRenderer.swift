import Dispatch
import Logging
import LongformCore
import Synchronization

/// Plays enqueued sample buffers on a route at the times its synchronizer's timeline gives them:
/// AVSampleBufferAudioRenderer's model and names. Buffers of any PCM format are converted to the
/// route's format as they are enqueued (a continuous high-quality resampler across buffers that
/// follow each other), so that the route's thread only copies. Thread-safe.
public final class AudioRenderer: RouteRenderSource, @unchecked Sendable {
    /// Whether the renderer can render, as `AVQueuedSampleBufferRenderingStatus`.
    public enum Status: Sendable, Equatable {
        /// Fresh: nothing enqueued yet.
        case unknown
        /// At least one buffer was enqueued.
        case rendering
        /// It cannot enqueue or render; see `error`.
        case failed
    }

    /// Why the renderer failed.
    public struct RenderError: Error, CustomStringConvertible, Sendable {
        /// What happened.
        public var description: String
    }

    /// A registration for the flushed-automatically event; keep it to keep receiving, pass it to `removeObserver`.
    public final class ObservationToken: Sendable {
        fileprivate let id: Int
        fileprivate init(id: Int) { self.id = id }
    }

    /// The most audio a renderer holds, whatever the look-ahead asks for.
    public static let maximumQueuedBytes = 4 << 30
    /// Audio ahead of the playhead that counts as enough to start smoothly, in seconds (or the look-ahead if smaller).
    public static let prerollDuration = 0.5
    /// The same on a rewindable route: audio enqueued a little late is still heard where it
    /// belongs (the route renders again from it), so a start need only cover the next enqueue.
    public static let rewindablePrerollDuration = 0.2

    private let state: Mutex<RendererState>
    /// Conversion runs outside `state`, so that the route's thread never waits for it.
    private let conversion: Mutex<(converter: StreamConverter, routeGeneration: Int)>
    /// Wakes an as-fast-as-possible route waiting for audio.
    private let renderable = RenderableSignal()
    /// Where a rewindable route renders again for a change, and the rewinds held inside `batchingRewinds`.
    private let rewinds = RewindCoordinator()
    private let logger = Logger(label: LogLabel.renderer)
    private let enqueueLogger = Logger(label: LogLabel.enqueue)

    /// A renderer that plays to `route` once it is added to a synchronizer and the synchronizer's rate is set.
    public init(route: any AudioRoute) {
        state = Mutex(RendererState(route: route))
        conversion = Mutex((StreamConverter(outputRate: route.format.sampleRate, outputChannels: route.format.channelCount), 0))
    }

    // MARK: - Properties

    /// The route it plays to.
    public var route: any AudioRoute { state.withLock { $0.route } }
    /// See `Status`.
    public var status: Status { state.withLock { $0.status } }
    /// Why it failed, when `status` is `.failed`.
    public var error: RenderError? { state.withLock { $0.error } }
    /// Gain from 0 (silent) to 1 (the media's level).
    public var volume: Float {
        get { state.withLock { $0.volume } }
        set { state.withLock { $0.volume = min(max(newValue, 0), 1) } }
    }
    /// Silences this renderer only.
    public var isMuted: Bool {
        get { state.withLock { $0.isMuted } }
        set { state.withLock { $0.isMuted = newValue } }
    }

    /// Seconds of audio it asks for ahead of the playhead: the route's look-ahead unless set, bounded by memory.
    public var lookAheadDuration: Double {
        get { state.withLock { $0.lookAhead } }
        set {
            state.withLock { state in
                let bytesPerSecond = Double(state.route.format.sampleRate * state.route.format.channelCount * MemoryLayout<Float>.size)
                state.lookAhead = min(max(newValue, 0.05), Double(Self.maximumQueuedBytes) / bytesPerSecond)
            }
            scheduleRequestIfReady()
        }
    }

    /// Whether it wants more buffers: less than the look-ahead is enqueued ahead of the playhead.
    public var isReadyForMoreMediaData: Bool { state.withLock { $0.isReadyForMoreMediaData } }

    /// Seconds to enqueue before starting: `prerollDuration`, or `rewindablePrerollDuration` on a rewindable route.
    public var preferredPrerollDuration: Double {
        state.withLock { $0.route.clock.canRewind ? Self.rewindablePrerollDuration : Self.prerollDuration }
    }

    /// Whether enough is enqueued to start without a stutter: the preroll, or everything there will be.
    public var hasSufficientMediaDataForReliablePlaybackStart: Bool { state.withLock { $0.hasSufficientMediaDataForReliablePlaybackStart } }

    /// Frames of silence played because no audio was enqueued where the timeline needed it.
    public var underrunFrameCount: Int64 { state.withLock { $0.underrunFrames } }

    /// Bytes of converted audio it holds.
    public var queuedByteCount: Int { state.withLock { $0.queue.byteCount } }

    // MARK: - Enqueueing

    /// Queues a buffer to play at its output presentation time on the synchronizer's timeline.
    /// Safe when not ready, but a well-behaved client enqueues while `isReadyForMoreMediaData`.
    public func enqueue(_ buffer: SampleBuffer) {
        guard buffer.format.isPCM else {
            fail("compressed \(buffer.format.codec ?? "") buffers need decoding before they are enqueued")
            return
        }
        guard buffer.outputPresentationTime.isNumeric else {
            logger.error("dropped a buffer with a non-numeric output time (\(buffer.outputPresentationTime))")
            return
        }
        // Converted and appended under the conversion lock, so that no flush falls in between.
        let synchronizer = conversion.withLock { conversion in
            let chunks = conversion.converter.convert(buffer)
            return state.withLock { state -> RenderSynchronizer? in
                guard state.status != .failed, conversion.routeGeneration == state.routeGeneration else { return nil }
                state.queue.append(chunks)
                state.status = .rendering
                state.enqueueCount += 1
                return state.synchronizer
            }
        }
        enqueueLogger.trace("enqueued \(buffer.outputFrameCount) frames at \(buffer.outputPresentationTime.seconds) s (\(buffer.format))")
        // Audio for a time a rewindable route already rendered (as silence, after a cut) is heard
        // from where it belongs.
        if let route = rewindableRouteDrivingTimeline() {
            rewind(route, toMediaTime: buffer.outputPresentationTime)
            route.sourceDidQueueAudio()
        }
        wakeRoute()
        synchronizer?.rendererDidChangeBufferedAudio()
    }

    /// Calls `block` on `queue` whenever the renderer is ready for more data, repeatedly, until
    /// `stopRequestingMediaData()`. Only the last request counts.
    public func requestMediaDataWhenReady(on queue: DispatchQueue, using block: @escaping @Sendable () -> Void) {
        state.withLock { $0.setRequest(on: queue, using: block) }
        scheduleRequestIfReady()
    }

    /// Stops calling the request block. Marks the end of the data: a resampler's tail is released,
    /// and an as-fast-as-possible route no longer waits for more.
    public func stopRequestingMediaData() {
        // The resampler's tail goes in before the request ends: an as-fast-as-possible route that
        // sees no request takes the queue as complete.
        let synchronizer = conversion.withLock { conversion in
            let tail = conversion.converter.finish()
            return state.withLock { state -> RenderSynchronizer? in
                if conversion.routeGeneration == state.routeGeneration { state.queue.append(tail) }
                state.request = nil
                return state.synchronizer
            }
        }
        wakeRoute()
        synchronizer?.rendererDidChangeBufferedAudio()
    }

    /// Discards everything enqueued. Enqueueing may continue at once. Not announced as an automatic flush.
    public func flush() {
        conversion.withLock { $0.converter.reset() }
        state.withLock { state in
            state.queue.removeAll()
            if state.status == .rendering { state.status = .unknown }
        }
        logger.debug("flushed")
        // What a rewindable route holds is taken back too: it is silence now.
        if let route = rewindableRouteDrivingTimeline() {
            let earliest = route.clock.earliestChangeableFrame()
            if earliest < renderedEnd(of: route) { rewinds.rewind(route, toFrame: earliest) }
        }
        wakeRoute()
        scheduleRequestIfReady()
    }

    /// Discards the buffers whose output time is at or after `time`, keeping those before it.
    /// Refused (`false`, nothing changed) when `time` is earlier than audio already handed to the route.
    public func flush(fromSourceTime time: MediaTime, completion: @escaping @Sendable (Bool) -> Void) {
        let result = flush(fromSourceTime: time)
        DispatchQueue.global().async { completion(result) }
    }

    /// `flush(fromSourceTime:completion:)`, answered at once: `false` (nothing changed) when
    /// `time` is earlier than audio already handed to the route.
    @discardableResult
    public func flush(fromSourceTime time: MediaTime) -> Bool {
        guard time.isNumeric else { return false }
        return cut(from: time, orPlayheadIfLater: false) != nil
    }

    /// Discards the buffers at and after `time`, or, when audio from `time` on was already handed
    /// to the route, everything after what was handed over. Returns the time it cut at: `time`,
    /// or the playhead. Never refused, so that an edit near the playhead still takes effect.
    @discardableResult
    public func flushFromPlayhead(notBefore time: MediaTime) -> MediaTime {
        cut(from: time.isNumeric ? time : .zero, orPlayheadIfLater: true) ?? time
    }

    /// The media time of the first frame not yet handed to the route (on a rewindable route, the
    /// first it can still take back): the earliest time `flush(fromSourceTime:)` accepts. Nil
    /// before the renderer is added to a synchronizer.
    public var playheadTime: MediaTime? {
        state.withLock { state in
            state.playheadFrame.map { MediaTime(value: $0, timescale: Int32(state.route.format.sampleRate)) }
        }
    }

    private func cut(from requested: MediaTime, orPlayheadIfLater: Bool) -> MediaTime? {
        // Hold the conversion lock throughout, so that a concurrent enqueue cannot slip past the cut.
        let cutTime = conversion.withLock { conversion -> MediaTime? in
            state.withLock { state -> MediaTime? in
                let sampleRate = Int32(state.route.format.sampleRate)
                var time = requested
                var isAtPlayhead = false
                if let playhead = state.playheadFrame.map({ MediaTime(value: $0, timescale: sampleRate) }), time < playhead {
                    guard orPlayheadIfLater else { return nil }
                    time = playhead
                    isAtPlayhead = true
                }
                let tail = conversion.converter.finish()
                state.queue.append(tail)
                // At the playhead the cut falls inside a buffer: everything from that frame goes.
                state.queue.removeChunks(fromSourceTime: time, routeFrame: time.convertScale(sampleRate, method: .roundHalfAwayFromZero).value,
                                         cuttingEveryChunk: isAtPlayhead)
                return time
            }
        }
        if let cutTime, let route = rewindableRouteDrivingTimeline() { rewind(route, toMediaTime: cutTime) }
        logger.debug("flush from \(requested.seconds) s \(cutTime.map { "done at \($0.seconds) s" } ?? "refused: at or behind the playhead")")
        if cutTime != nil {
            wakeRoute()
            scheduleRequestIfReady()
        }
        return cutTime
    }

    /// Has a rewindable route render again from where media time `time` plays, when it already
    /// rendered that far (see `RewindCoordinator.frameToRenderAgain`).
    private func rewind(_ route: any RewindableRoute, toMediaTime time: MediaTime) {
        guard let timebase = state.withLock({ $0.synchronizer?.timebase }) else { return }
        let earliest = route.clock.earliestChangeableFrame()
        guard let frame = RewindCoordinator.frameToRenderAgain(forMediaTime: time, earliestChangeableFrame: earliest,
                                                               timeline: timebase.segment(forTick: earliest), sampleRate: route.format.sampleRate) else { return }
        if frame < renderedEnd(of: route) { rewinds.rewind(route, toFrame: frame) }
    }

    /// The end of what `route` has rendered or is rendering now: a render in progress may already
    /// have read the old timeline or queue for frames up to its claim.
    private func renderedEnd(of route: any AudioRoute) -> Int64 {
        let claim = state.withLock { $0.synchronizer?.timebase.renderClaim } ?? .min
        return max(route.clock.framesRendered, claim)
    }

    /// Runs `changes` (flushes, enqueues, rate changes on its synchronizer) and has a rewindable
    /// route render again once, from the earliest frame they touched, instead of after each one: a
    /// seek is a pause, a flush, an enqueue and a start, and a route that flushes a server stream
    /// for each would be heard later. Rewinds other threads ask for meanwhile wait for the end too.
    public func batchingRewinds<Result>(_ changes: () throws -> Result) rethrows -> Result {
        try rewinds.batching(route: { [weak self] in self?.rewindableRouteDrivingTimeline() }, changes)
    }

    /// Calls `handler` on `queue` with the time of the first discarded sample whenever the renderer
    /// was flushed without being asked (a route change). Re-enqueue from that time.
    public func observeFlushedAutomatically(on queue: DispatchQueue, using handler: @escaping @Sendable (MediaTime) -> Void) -> ObservationToken {
        state.withLock { state in
            let id = state.nextObserverID
            state.nextObserverID += 1
            state.flushObservers[id] = (queue, handler)
            return ObservationToken(id: id)
        }
    }

    /// Stops an observation.
    public func removeObserver(_ token: ObservationToken) {
        _ = state.withLock { $0.flushObservers.removeValue(forKey: token.id) }
    }

    // MARK: - Routes

    /// Moves playback to another route. Everything enqueued is flushed and announced through
    /// `observeFlushedAutomatically` with the media time heard at the switch; the timeline goes on
    /// at the same time and rate on the new route's clock. Setting the route it already plays to
    /// is what a reconfiguration under the route looks like (a device moved or changed): the route
    /// keeps running and keeps what it was handed, and the renderer is flushed from the playhead.
    public func setRoute(_ newRoute: any AudioRoute) throws(RouteError) {
        let (oldRoute, synchronizer) = state.withLock { ($0.route, $0.synchronizer) }
        // A rewind held back for the old route means nothing on the new one.
        if oldRoute !== newRoute { rewinds.forgetPending() }
        let flushTime: MediaTime
        if oldRoute === newRoute {
            flushTime = flushFromPlayhead(notBefore: .zero)
            logger.info("route \(newRoute.name) reconfigured; flushed from \(flushTime.seconds) s")
        } else {
            oldRoute.stop(waiting: true)
            flushTime = synchronizer?.timebase.currentTime() ?? .zero
            conversion.withLock { conversion in
                conversion.converter = StreamConverter(outputRate: newRoute.format.sampleRate, outputChannels: newRoute.format.channelCount)
                conversion.routeGeneration += 1
                state.withLock { state in
                    state.route = newRoute
                    state.queue = RenderQueue(channelCount: newRoute.format.channelCount)
                    state.routeGeneration = conversion.routeGeneration
                    state.renderedMediaFrame = nil
                    state.lookAhead = newRoute.preferredLookAhead
                }
            }
            logger.info("route changed from \(oldRoute.name) to \(newRoute.name); flushed from \(flushTime.seconds) s")
            if let synchronizer {
                synchronizer.timebase.switchClock(to: RouteTimebaseClock(newRoute.clock))
                try newRoute.start(pullingFrom: self)
            }
        }
        let observers = state.withLock { Array($0.flushObservers.values) }
        for observer in observers { observer.queue.async { observer.handler(flushTime) } }
        scheduleRequestIfReady()
    }

    // MARK: - Attachment to a synchronizer

    /// Called by `RenderSynchronizer.addRenderer`: the timeline now follows this renderer's route.
    func attach(to synchronizer: RenderSynchronizer) throws(RouteError) {
        let route = setSynchronizer(synchronizer)
        synchronizer.timebase.switchClock(to: RouteTimebaseClock(route.clock))
        try route.start(pullingFrom: self)
    }

    /// Called when removed from its synchronizer: the route stops.
    func detach(waitingForRoute: Bool = true) {
        setSynchronizer(nil).stop(waiting: waitingForRoute)
    }

    /// Attaches or detaches; returns the route. Detached, a route waiting for audio returns at
    /// once, so that it sees its stop without sleeping out its timeout.
    private func setSynchronizer(_ synchronizer: RenderSynchronizer?) -> any AudioRoute {
        let route = state.withLock { state -> any AudioRoute in
            state.synchronizer = synchronizer
            return state.route
        }
        renderable.setDetached(synchronizer == nil)
        return route
    }

    /// Called by the synchronizer after a rate or time change that applies from `tick` of its
    /// clock: a rewindable route that already rendered that tick renders again from there.
    func timelineDidChange(fromTick tick: Int64) {
        if let route = rewindableRouteDrivingTimeline(), tick < renderedEnd(of: route) {
            rewinds.rewind(route, toFrame: tick)
        }
        wakeRoute()
        scheduleRequestIfReady()
    }

    /// The route, when it can rewind and its clock is the timeline's (ticks are its frames).
    private func rewindableRouteDrivingTimeline() -> (any RewindableRoute)? {
        let (route, synchronizer) = state.withLock { ($0.route, $0.synchronizer) }
        guard let rewindable = route as? any RewindableRoute, RendererState.rewinds(route, timelineOf: synchronizer?.timebase) else { return nil }
        return rewindable
    }

    // MARK: - RouteRenderSource

    /// Fills `buffer` for a real-time route: the frames the timeline plays from `routeFrame` on,
    /// silence where it stands still or no audio is queued (an underrun, counted).
    public func render(into buffer: UnsafeMutableBufferPointer<Float>, frameCount: Int, atRouteFrame routeFrame: Int64) -> Int {
        let (synchronizer, channels) = state.withLock { ($0.synchronizer, $0.route.format.channelCount) }
        guard let synchronizer else {
            buffer.update(repeating: 0)
            return frameCount
        }
        let timebase = synchronizer.timebase
        let retainedFrame = retainedMediaFrame(timebase)
        let generation = timebase.generation
        var produced = 0
        var becameReady = false
        defer { timebase.releaseRenderClaim(downTo: routeFrame + Int64(produced)) }
        while produced < frameCount {
            let frame = routeFrame + Int64(produced)
            let (segment, nextChange) = timebase.segmentForRendering(fromTick: frame, count: frameCount - produced)
            var span = frameCount - produced
            if let nextChange, nextChange > frame { span = min(span, Int(nextChange - frame)) }
            let destination = UnsafeMutableBufferPointer(rebasing: buffer[(produced * channels)...])
            if segment.rate == 0 {
                destination.baseAddress!.update(repeating: 0, count: span * channels)
                produced += span
                continue
            }
            let mediaFrame = Self.mediaFrame(of: segment, atTick: frame, ticksPerSecond: timebase.clock.ticksPerSecond)
            if readQueue(into: destination, fromMediaFrame: mediaFrame, count: span, generation: generation,
                         mode: .realTime(retainingFrom: retainedFrame))?.becameReady == true {
                becameReady = true
            }
            produced += span
        }
        if becameReady { scheduleRequestIfReady() }
        return produced
    }

    /// Fills `buffer` for an as-fast-as-possible route (through its `OfflineRenderDriver`): up to
    /// `frameCount` frames, ending at the first cut (the next time observer's boundary, a change of
    /// the timeline's segment, the end of the audio queued while more may come), so that the driver
    /// writes and runs the observers before going on; 0 when it should wait (the timeline stands
    /// still, or the audio for `routeFrame` is not queued yet).
    func renderAsFastAsPossible(into buffer: UnsafeMutableBufferPointer<Float>, frameCount: Int, atRouteFrame routeFrame: Int64) -> Int {
        renderable.renderDidBegin()
        guard let synchronizer = state.withLock({ $0.synchronizer }) else { return 0 }
        let timebase = synchronizer.timebase
        let generation = timebase.generation
        var produced = 0
        // Ticks not rendered after all are released.
        defer { timebase.releaseRenderClaim(downTo: routeFrame + Int64(produced)) }
        let (segment, nextChange) = timebase.segmentForRendering(fromTick: routeFrame, count: frameCount)
        var span = frameCount
        if let nextChange, nextChange > routeFrame { span = min(span, Int(nextChange - routeFrame)) }
        guard segment.rate != 0 else { return 0 }
        let sampleRate = Int32(timebase.clock.ticksPerSecond)
        let mediaFrame = Self.mediaFrame(of: segment, atTick: routeFrame, ticksPerSecond: timebase.clock.ticksPerSecond)
        // Read before the boundaries: a client adds its last boundary before it stops requesting,
        // so a request seen ended means that boundary is seen too.
        let isRequesting = state.withLock { $0.request != nil }
        // Stop at the first frame whose exact timeline time reaches the next boundary (the timeline
        // may sit between frames after a seek to an off-grid time).
        let now = segment.time(atTick: routeFrame, ticksPerSecond: Int64(sampleRate))
        // A boundary added exactly here after the driver ran the observers (a client's last, added
        // as it finished enqueueing) fires first: the driver runs them again before the next call.
        if synchronizer.hasNewBoundary(at: now) { return 0 }
        if let boundary = synchronizer.nextBoundary(after: now) {
            let frames = (boundary - now).convertScale(sampleRate, method: .roundTowardPositiveInfinity).value
            if frames > 0 { span = min(span, Int(frames)) }
        }
        // More audio may still come: render only what is queued, and wait for the rest. Checked
        // and read under one lock, so that a flush cannot fall between (its frames would be
        // written as silence, past the playhead it was accepted before).
        let read = readQueue(into: buffer, fromMediaFrame: mediaFrame, count: span, generation: generation,
                             mode: .asFastAsPossible(endsAtQueuedAudio: isRequesting))
        guard let read else {
            // Waiting for audio: make sure the client is being asked for it. A request can miss
            // a change to "ready" that came from another thread; the route must never wait on that.
            scheduleRequestIfReady()
            return 0
        }
        if read.becameReady { scheduleRequestIfReady() }
        produced = read.count
        return produced
    }

    /// The queue's frame that `segment` (at rate 1) plays at `tick`: its anchor's time in frames,
    /// and one frame a tick from there.
    private static func mediaFrame(of segment: TimelineSegment, atTick tick: Int64, ticksPerSecond: Int64) -> Int64 {
        segment.time.convertScale(Int32(ticksPerSecond), method: .roundHalfAwayFromZero).value + (tick - segment.anchorTick)
    }

    /// How a pull reads the queue.
    private enum ReadMode {
        /// For a real-time route: silence where nothing is queued (an underrun, counted, after
        /// which the client is asked again), and the audio from `retainingFrom` on kept queued
        /// for a rewind.
        case realTime(retainingFrom: Int64)
        /// For an as-fast-as-possible route: nothing played is kept; with `endsAtQueuedAudio`
        /// (more may come), no further than the queued audio.
        case asFastAsPossible(endsAtQueuedAudio: Bool)
    }

    /// Copies up to `count` frames of queued audio from `mediaFrame` into `destination` at the gain
    /// (silence where none is queued), and notes them as handed to the route, as `mode` says.
    /// Returns the frames read and whether the renderer became ready for more (or starved); nil,
    /// nothing read, when the read ends at the queued audio and none is queued from `mediaFrame`.
    private func readQueue(into destination: UnsafeMutableBufferPointer<Float>, fromMediaFrame mediaFrame: Int64, count requested: Int,
                           generation: UInt64, mode: ReadMode) -> (count: Int, becameReady: Bool)? {
        state.withLock { state -> (count: Int, becameReady: Bool)? in
            var count = requested
            var retainedFrame = Int64.max, countsUnderrun = false
            switch mode {
            case .realTime(let retaining):
                (retainedFrame, countsUnderrun) = (retaining, true)
            case .asFastAsPossible(endsAtQueuedAudio: true):
                guard let end = state.queue.endFrame, end > mediaFrame else { return nil }
                count = min(count, Int(end - mediaFrame))
            case .asFastAsPossible(endsAtQueuedAudio: false):
                break
            }
            var becameReady = false
            let channels = state.route.format.channelCount
            let wasReady = state.isReadyForMoreMediaData
            let covered = state.queue.read(into: destination, from: mediaFrame, count: count, retainingFrom: retainedFrame)
            if covered < count && countsUnderrun {
                becameReady = true
                state.underrunFrames += Int64(count - covered)
            }
            state.renderedMediaFrame = mediaFrame + Int64(count)
            state.renderedGeneration = generation
            if !wasReady && state.isReadyForMoreMediaData { becameReady = true }
            let gain: Float = state.isMuted ? 0 : state.volume
            if gain != 1 {
                for index in 0..<(count * channels) { destination[index] *= gain }
            }
            return (count, becameReady)
        }
    }

    /// On a rewindable route, the earliest media frame the timeline plays from a second ago on:
    /// audio from there on may be rendered again and stays queued (a rewind's target is the frame
    /// heard plus the margin, but the route's idea of that frame can be off; frames before the
    /// target a route writes again from its own copy, see `RewindableRoute`). Not simply the frame
    /// heard a second ago: after a restart from an earlier time (play from stopped, a seek back),
    /// the frames just rendered lie before it, and a route that resumes before the restart's first
    /// frame renders them again.
    /// `Int64.max` (keep nothing played) on other routes.
    private func retainedMediaFrame(_ timebase: Timebase) -> Int64 {
        let route = state.withLock { $0.route }
        guard RendererState.rewinds(route, timelineOf: timebase) else { return .max }
        let sampleRate = Int64(route.format.sampleRate)
        return timebase.earliestTime(fromTick: route.clock.currentFrame() - sampleRate)
            .convertScale(Int32(sampleRate), method: .roundTowardNegativeInfinity).value
    }

    public func routeDidResume(atFrame frame: Int64, afterRewindTo target: Int64) {
        guard frame > target, rewindableRouteDrivingTimeline() != nil, let timebase = state.withLock({ $0.synchronizer?.timebase }) else { return }
        logger.debug("route resumed at frame \(frame), \(frame - target) frames after the rewind asked for")
        timebase.routeResumed(atTick: frame, afterRewindTo: target)
    }

    public func queuedFrameCount(fromRouteFrame routeFrame: Int64) -> Int64? {
        // A route asking is about to render, or waits for audio. On a rewindable route the renderer
        // becomes ready as the frame heard moves on, not only as a read takes audio, and a route
        // that reads only queued audio (the speaker route) read nothing more once filled: the
        // client was asked again only at an underrun, and the speakers ran down to 0.2 s each
        // look-ahead, then played a gap.
        defer { scheduleRequestIfReady() }
        return state.withLock { state -> Int64? in
            guard let timebase = state.synchronizer?.timebase, state.request != nil else { return nil }
            let (segment, nextChange) = timebase.segment(forTick: routeFrame)
            if segment.rate == 0 { return nextChange.map { max(0, $0 - routeFrame) } }
            let sampleRate = Int64(state.route.format.sampleRate)
            let mediaFrame = segment.time(atTick: routeFrame, ticksPerSecond: sampleRate).convertScale(Int32(sampleRate), method: .roundHalfAwayFromZero).value
            return max(0, (state.queue.endFrame ?? mediaFrame) - mediaFrame)
        }
    }

    public func timelineRate(atRouteFrame routeFrame: Int64) -> (rate: Double, nextChangeFrame: Int64?) {
        guard let timebase = state.withLock({ $0.synchronizer?.timebase }) else { return (0, nil) }
        let (segment, nextChange) = timebase.segment(forTick: routeFrame)
        return (segment.rate, nextChange)
    }

    /// Whether the timeline stands still (rate 0, or no synchronizer): an as-fast-as-possible
    /// route with an action scheduled at a later frame writes silence up to it instead of waiting.
    var isTimelineStopped: Bool {
        guard let synchronizer = state.withLock({ $0.synchronizer }) else { return true }
        return synchronizer.timebase.rate == 0
    }

    /// Runs the time observers due at the timeline's position and waits for their blocks, for an
    /// as-fast-as-possible route between two writes; stops waiting once `isAbandoned` turns true
    /// (a block that stops the route: a route change, the renderer removed).
    func runDueObservers(abandoningIf isAbandoned: () -> Bool) {
        state.withLock { $0.synchronizer }?.evaluateObservers(waitingUnless: isAbandoned)
    }

    /// Blocks an as-fast-as-possible route until there may be audio to render, or `timeoutSeconds` pass.
    func waitForRenderableAudio(timeoutSeconds: Double) {
        renderable.wait(timeoutSeconds: timeoutSeconds)
    }

    // MARK: - Internals

    private func wakeRoute() { renderable.wake() }

    private func fail(_ message: String) {
        state.withLock { state in
            state.status = .failed
            state.error = RenderError(description: message)
        }
        logger.error("renderer failed: \(message)")
    }

    /// Runs the request block on its queue if the renderer is ready and no call is already scheduled.
    private func scheduleRequestIfReady(after delay: Double = 0) {
        guard let request = state.withLock({ $0.scheduleRequestIfReady() }) else { return }
        let work: @Sendable () -> Void = { [weak self] in self?.runRequest(generation: request.generation) }
        if delay > 0 {
            request.queue.asyncAfter(deadline: .now() + delay, execute: work)
        } else {
            request.queue.async(execute: work)
        }
    }

    private func runRequest(generation: Int) {
        guard let call = state.withLock({ $0.beginRequestCall(generation: generation) }), let block = call.block else { return }
        block()
        // Called again while still ready; after a call that enqueued nothing, not in a busy loop.
        let enqueuedNothing = state.withLock { $0.enqueuedNothing(since: call.enqueueCountBefore) }
        scheduleRequestIfReady(after: enqueuedNothing ? 0.01 : 0)
    }
}
