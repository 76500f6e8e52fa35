import Dispatch
import LongformCore

/// What an `AudioRenderer` knows, behind its lock, and the rules read from it alone: where the
/// playhead is, how much is enqueued ahead of it, whether the renderer wants more and whether it
/// can start without a stutter. A value type, so that the rules are tested without a route's thread.
struct RendererState {
    /// The client's request block, as `requestMediaDataWhenReady` set it.
    struct Request {
        var queue: DispatchQueue
        var block: @Sendable () -> Void
        var generation: Int
        var isScheduled = false
    }

    var route: any AudioRoute
    var queue: RenderQueue
    var status: AudioRenderer.Status = .unknown
    var error: AudioRenderer.RenderError?
    var volume: Float = 1
    var isMuted = false
    var lookAhead: Double
    var request: Request?
    var requestGeneration = 0
    var enqueueCount = 0
    /// The media frame (route units) just past the last frame rendered while playing, and the
    /// timeline generation it was rendered under (after a jump it says nothing of the playhead).
    var renderedMediaFrame: Int64?
    var renderedGeneration: UInt64 = 0
    /// Bumped when the route (and so the converted format) changes.
    var routeGeneration = 0
    var synchronizer: RenderSynchronizer?
    var flushObservers: [Int: (queue: DispatchQueue, handler: @Sendable (MediaTime) -> Void)] = [:]
    var nextObserverID = 1
    var underrunFrames: Int64 = 0

    /// A renderer's state on `route`, nothing enqueued, the route's look-ahead.
    init(route: any AudioRoute) {
        self.route = route
        queue = RenderQueue(channelCount: route.format.channelCount)
        lookAhead = route.preferredLookAhead
    }

    /// Whether `route` can rewind (its clock has a margin) and its clock is `timebase`'s.
    static func rewinds(_ route: any AudioRoute, timelineOf timebase: Timebase?) -> Bool {
        guard route.clock.canRewind, let clock = timebase?.clock as? RouteTimebaseClock else { return false }
        return clock.clock === route.clock
    }

    /// The first media frame the route has not been handed yet: what was last rendered, if the
    /// timeline has not changed since; otherwise where the next render will start (also paused).
    /// On a rewindable route: the frame heard plus the route's margin (what it holds beyond can be
    /// taken back). Nil without a synchronizer.
    var playheadFrame: Int64? {
        guard let timebase = synchronizer?.timebase else { return nil }
        let sampleRate = route.format.sampleRate
        let tick: Int64
        if Self.rewinds(route, timelineOf: timebase) {
            // What a rewindable route holds can still be taken back: only what it is about to play counts.
            tick = route.clock.earliestChangeableFrame()
        } else {
            if let rendered = renderedMediaFrame, renderedGeneration == timebase.generation { return rendered }
            // Frames a render has claimed count as handed over, even before the route says so.
            tick = max(route.clock.framesRendered, timebase.renderClaim)
        }
        return timebase.segment(forTick: tick).segment.time(atTick: tick, ticksPerSecond: Int64(sampleRate))
            .convertScale(Int32(sampleRate), method: .roundHalfAwayFromZero).value
    }

    /// Frames enqueued from the playhead on.
    var framesAhead: Int64 {
        guard let end = queue.endFrame, let start = queue.startFrame else { return 0 }
        return end - max(start, playheadFrame ?? start)
    }

    /// Whether the renderer wants more: less than the look-ahead ahead of the playhead, within the
    /// memory bound, and not failed.
    var isReadyForMoreMediaData: Bool {
        guard status != .failed else { return false }
        let seconds = Double(framesAhead) / Double(route.format.sampleRate)
        return seconds < lookAhead && queue.byteCount < AudioRenderer.maximumQueuedBytes
    }

    // MARK: - The client's request

    /// Sets the client's request block, replacing the last (a call of the old one still scheduled does nothing).
    mutating func setRequest(on queue: DispatchQueue, using block: @escaping @Sendable () -> Void) {
        requestGeneration += 1
        request = Request(queue: queue, block: block, generation: requestGeneration)
    }

    /// The request to call now, marked scheduled: while the renderer is ready and no call of it is
    /// scheduled yet (one call at a time, however many changes make it ready).
    mutating func scheduleRequestIfReady() -> Request? {
        guard var scheduled = request, !scheduled.isScheduled, isReadyForMoreMediaData else { return nil }
        scheduled.isScheduled = true
        request = scheduled
        return scheduled
    }

    /// A scheduled call of request `generation` runs: nil when that request was replaced or ended;
    /// otherwise its block (nil when no longer ready) and the enqueue count before the call.
    mutating func beginRequestCall(generation: Int) -> (block: (@Sendable () -> Void)?, enqueueCountBefore: Int)? {
        guard var called = request, called.generation == generation else { return nil }
        called.isScheduled = false
        request = called
        return (isReadyForMoreMediaData ? called.block : nil, enqueueCount)
    }

    /// Whether a call that began at `enqueueCountBefore` enqueued nothing: the next waits a little,
    /// so that a client with nothing to give is not asked in a busy loop.
    func enqueuedNothing(since enqueueCountBefore: Int) -> Bool { enqueueCount == enqueueCountBefore }

    /// Whether a start would not stutter: the preroll is enqueued (or 90 % of a shorter look-ahead),
    /// or no more is coming (no request).
    var hasSufficientMediaDataForReliablePlaybackStart: Bool {
        if request == nil { return true }
        let seconds = Double(framesAhead) / Double(route.format.sampleRate)
        let preroll = route.clock.canRewind ? AudioRenderer.rewindablePrerollDuration : AudioRenderer.prerollDuration
        return seconds >= min(preroll, lookAhead * 0.9)
    }
}
