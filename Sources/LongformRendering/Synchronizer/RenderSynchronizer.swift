import Dispatch
import Logging
import LongformCore
import Synchronization

/// The timeline its renderers play against: AVSampleBufferRenderSynchronizer's model and names.
/// Its timebase follows the clock of the route its audio renderer plays to (frames heard plus the
/// device latency), and the host clock when no renderer is attached. Boundary observers fire exactly
/// once each time the playhead passes their times, also when time jumps over them. Thread-safe.
public final class RenderSynchronizer: @unchecked Sendable {
    /// A registered time observer; pass it to `removeTimeObserver`.
    public final class TimeObserverToken: Sendable {
        fileprivate let id: TimeObserverSchedule.ID
        fileprivate init(id: TimeObserverSchedule.ID) { self.id = id }
    }

    /// A rate change, as the rate-change event reports it.
    public struct RateChange: Sendable, Equatable {
        /// The new rate.
        public var rate: Double
        /// The timeline time the change took effect at.
        public var time: MediaTime

        /// A change to `rate` at `time`.
        public init(rate: Double, time: MediaTime) {
            self.rate = rate
            self.time = time
        }
    }

    private struct Observer {
        var queue: DispatchQueue
        var block: @Sendable (MediaTime) -> Void
    }

    private struct PendingRateChange {
        var rate: Double
        var time: MediaTime
        var hostTime: UInt64?
    }

    private struct PendingRemoval {
        var renderer: AudioRenderer
        var boundary: TimeObserverSchedule.ID?
        var completion: (@Sendable (Bool) -> Void)?
    }

    private struct State {
        var renderers: [AudioRenderer] = []
        var schedule = TimeObserverSchedule()
        var observers: [TimeObserverSchedule.ID: Observer] = [:]
        var rateObservers: [Int: Observer] = [:]
        var nextRateObserverID = 1
        var delaysRateChangeUntilHasSufficientMediaData = true
        var pendingRateChange: PendingRateChange?
        var pendingRemoval: PendingRemoval?
        var timer: DispatchSourceTimer?
        /// Set by a rate or time change, or a new observer: evaluate at once.
        var needsEvaluation = false
    }

    /// The timeline: rate and time on the current clock.
    public let timebase = Timebase()
    private let state = Mutex(State())
    private let tickQueue = DispatchQueue(label: "longform.synchronizer.observers")
    private let logger = Logger(label: LogLabel.synchronizer)

    /// The longest the observer timer sleeps while the timeline runs, so that the difference between
    /// the host clock it sleeps on and the route clock the timeline follows never builds up.
    public static let maximumObserverSleep = 0.25

    /// A synchronizer at time zero, rate zero, on the host clock.
    public init() {}

    // MARK: - Rate and time

    /// The playback rate: 0 stopped, 1 natural. Setting it keeps the time continuous.
    public var rate: Double {
        get { state.withLock { $0.pendingRateChange?.rate } ?? timebase.rate }
        set { setRate(newValue, time: .invalid) }
    }

    /// The media time now.
    public func currentTime() -> MediaTime { timebase.currentTime() }

    /// Whether a rate change waits until every renderer has enough audio to start smoothly (default true).
    public var delaysRateChangeUntilHasSufficientMediaData: Bool {
        get { state.withLock { $0.delaysRateChangeUntilHasSufficientMediaData } }
        set {
            state.withLock { $0.delaysRateChangeUntilHasSufficientMediaData = newValue }
            rendererDidChangeBufferedAudio()
        }
    }

    /// Sets the time, then the rate, taking effect as soon as the change can be heard.
    /// `time` `.invalid` leaves the time unchanged.
    public func setRate(_ rate: Double, time: MediaTime) {
        requestRateChange(PendingRateChange(rate: max(rate, 0), time: time, hostTime: nil))
    }

    /// Sets rate and time so that the timeline reads `time` at host time `hostTime`
    /// (a `HostClock` time). A past host time is interpolated as though the timeline had been running;
    /// a future one starts the timeline at once from an earlier time, so that it reaches `time` then.
    public func setRate(_ rate: Double, time: MediaTime, atHostTime hostTime: MediaTime) {
        requestRateChange(PendingRateChange(rate: max(rate, 0), time: time, hostTime: HostClock.nanoseconds(of: hostTime)))
    }

    private func requestRateChange(_ change: PendingRateChange) {
        let mustWait = state.withLock { state -> Bool in
            let wait = change.rate != 0 && state.delaysRateChangeUntilHasSufficientMediaData
                && state.renderers.contains { !$0.hasSufficientMediaDataForReliablePlaybackStart }
            state.pendingRateChange = wait ? change : nil
            return wait
        }
        if mustWait {
            logger.debug("rate \(change.rate) waits for sufficient media data")
            return
        }
        apply(change)
    }

    private func apply(_ requested: PendingRateChange) {
        var change = requested
        if change.rate != 0 && change.rate != 1 {
            // The timeline runs at the rate the audio plays at, or boundaries would fire early or late.
            logger.warning("rate \(change.rate) is played at rate 1: only 0 and 1 are rendered")
            change.rate = 1
        }
        let before = timebase.setRate(change.rate, time: change.time, atHostTime: change.hostTime)
        logger.debug("rate \(before.rate) → \(change.rate) at \(change.time.isValid ? change.time.seconds : before.time.seconds) s")
        let renderers = state.withLock { state in
            state.needsEvaluation = true
            return state.renderers
        }
        for renderer in renderers { renderer.timelineDidChange(fromTick: before.effectiveTick) }
        updateTimer()
        if before.rate != change.rate {
            let event = RateChange(rate: change.rate, time: change.time.isValid ? change.time : before.time)
            let observers = state.withLock { Array($0.rateObservers.values) }
            for observer in observers { observer.queue.async { observer.block(event.time) } }
            rateChangeHandlersFire(event)
        }
    }

    private let rateChangeStreams = Mutex<[Int: AsyncStream<RateChange>.Continuation]>([:])

    private func rateChangeHandlersFire(_ event: RateChange) {
        for continuation in rateChangeStreams.withLock({ Array($0.values) }) { continuation.yield(event) }
    }

    /// Rate changes, as they happen, for async consumers.
    public func rateChanges() -> AsyncStream<RateChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: RateChange.self)
        let id = Int.random(in: 0..<Int.max)
        rateChangeStreams.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.rateChangeStreams.withLock { $0.removeValue(forKey: id) } }
        return stream
    }

    /// Calls `block` on `queue` with the timeline time after each change of rate (including changes it did not ask for).
    @discardableResult
    public func observeRateChanges(on queue: DispatchQueue, using block: @escaping @Sendable (MediaTime) -> Void) -> TimeObserverToken {
        state.withLock { state in
            let id = -state.nextRateObserverID
            state.nextRateObserverID += 1
            state.rateObservers[id] = Observer(queue: queue, block: block)
            return TimeObserverToken(id: id)
        }
    }

    /// Called by renderers as their buffered audio changes: a delayed rate change may now apply.
    func rendererDidChangeBufferedAudio() {
        let ready = state.withLock { state -> PendingRateChange? in
            guard let pending = state.pendingRateChange else { return nil }
            let sufficient = !state.delaysRateChangeUntilHasSufficientMediaData
                || state.renderers.allSatisfy { $0.hasSufficientMediaDataForReliablePlaybackStart }
            guard sufficient else { return nil }
            state.pendingRateChange = nil
            return pending
        }
        if let ready { apply(ready) }
    }

    // MARK: - Renderers

    /// The renderers attached, including one scheduled for removal.
    public var renderers: [AudioRenderer] { state.withLock { $0.renderers } }

    /// Attaches a renderer: its route starts pulling, and the timeline follows the route's clock.
    public func addRenderer(_ renderer: AudioRenderer) throws(RouteError) {
        let isNew = state.withLock { state -> Bool in
            guard !state.renderers.contains(where: { $0 === renderer }) else { return false }
            state.renderers.append(renderer)
            return true
        }
        guard isNew else { return }
        do {
            try renderer.attach(to: self)
        } catch {
            state.withLock { $0.renderers.removeAll { $0 === renderer } }
            throw error
        }
        updateTimer()
    }

    /// Detaches a renderer at timeline time `time` (now if `.invalid` or past). `completion` gets
    /// true when it was removed, false when it was never added or a later removal superseded this one.
    public func removeRenderer(_ renderer: AudioRenderer, at time: MediaTime, completion: (@Sendable (Bool) -> Void)? = nil) {
        let now = currentTime()
        let (known, superseded) = state.withLock { state -> (Bool, PendingRemoval?) in
            let known = state.renderers.contains { $0 === renderer }
            let superseded = state.pendingRemoval
            if let superseded {
                if let boundary = superseded.boundary { state.schedule.remove(boundary) }
                state.pendingRemoval = nil
            }
            return (known, superseded)
        }
        if let completion = superseded?.completion { DispatchQueue.global().async { completion(false) } }
        guard known else {
            if let completion { DispatchQueue.global().async { completion(false) } }
            return
        }
        if !time.isNumeric || time <= now {
            detach(renderer)
            if let completion { DispatchQueue.global().async { completion(true) } }
            return
        }
        // In place before its boundary can fire; the boundary's id follows.
        state.withLock { $0.pendingRemoval = PendingRemoval(renderer: renderer, boundary: nil, completion: completion) }
        let boundary = register(Observer(queue: tickQueue, block: { [weak self] _ in self?.finishScheduledRemoval() })) { $0.addBoundary(times: [time]) }
        state.withLock { state in
            if state.pendingRemoval?.renderer === renderer && state.pendingRemoval?.boundary == nil { state.pendingRemoval?.boundary = boundary }
        }
    }

    private func finishScheduledRemoval() {
        let removal = state.withLock { state -> PendingRemoval? in
            guard let removal = state.pendingRemoval else { return nil }
            if let boundary = removal.boundary {
                state.schedule.remove(boundary)
                state.observers[boundary] = nil
            }
            state.pendingRemoval = nil
            return removal
        }
        guard let removal else { return }
        // Fired as an observer: an as-fast-as-possible route waits for this block, so its thread
        // is told to stop and not waited for.
        detach(removal.renderer, waitingForRoute: false)
        if let completion = removal.completion { DispatchQueue.global().async { completion(true) } }
    }

    private func detach(_ renderer: AudioRenderer, waitingForRoute: Bool = true) {
        let remaining = state.withLock { state -> AudioRenderer? in
            state.renderers.removeAll { $0 === renderer }
            return state.renderers.first
        }
        renderer.detach(waitingForRoute: waitingForRoute)
        if remaining == nil { timebase.switchClock(to: HostTimebaseClock()) }
        updateTimer()
    }

    // MARK: - Time observers

    /// Calls `block` on `queue` every `interval` of timeline time while it runs, and whenever time
    /// jumps or the rate changes. Pair with `removeTimeObserver`.
    public func addPeriodicTimeObserver(forInterval interval: MediaTime, queue: DispatchQueue, using block: @escaping @Sendable (MediaTime) -> Void) -> TimeObserverToken {
        TimeObserverToken(id: register(Observer(queue: queue, block: block)) { $0.addPeriodic(interval: interval) })
    }

    /// Calls `block` on `queue` with the boundary time, once each time the playhead passes one of
    /// `times`, also when time jumps over it. Pair with `removeTimeObserver`.
    public func addBoundaryTimeObserver(forTimes times: [MediaTime], queue: DispatchQueue, using block: @escaping @Sendable (MediaTime) -> Void) -> TimeObserverToken {
        TimeObserverToken(id: register(Observer(queue: queue, block: block)) { $0.addBoundary(times: times) })
    }

    /// Adds an observer to the schedule (which starts measuring passages from now if it was empty)
    /// and has the timer evaluate at once.
    private func register(_ observer: Observer, adding add: (inout TimeObserverSchedule) -> TimeObserverSchedule.ID) -> TimeObserverSchedule.ID {
        let id = state.withLock { state in
            if state.schedule.isEmpty { state.schedule.reset(to: timebase.currentTime(), generation: timebase.generation, rate: timebase.rate) }
            let id = add(&state.schedule)
            state.observers[id] = observer
            state.needsEvaluation = true
            return id
        }
        updateTimer()
        return id
    }

    /// Removes an observer: no new call of its block starts after this returns.
    public func removeTimeObserver(_ token: TimeObserverToken) {
        state.withLock { state in
            state.schedule.remove(token.id)
            state.observers[token.id] = nil
            state.rateObservers[token.id] = nil
        }
        updateTimer()
    }

    /// The first boundary after `time`, where an as-fast-as-possible route stops to let it fire.
    func nextBoundary(after time: MediaTime) -> MediaTime? {
        state.withLock { $0.schedule.nextBoundary(after: time) }
    }

    /// Whether a boundary added since the observers were last evaluated lies exactly at `time`.
    func hasNewBoundary(at time: MediaTime) -> Bool {
        state.withLock { $0.schedule.hasNewBoundary(at: time) }
    }

    /// Fires the observers that are due, on their queues.
    func evaluateObservers() {
        _ = fireDueObservers()
    }

    /// Fires the observers that are due and waits for their blocks (an as-fast-as-possible route's
    /// driver, between two writes), so that what they do takes effect at exactly the frame they
    /// fired at, until they are done or `isAbandoned` turns true (checked every 10 ms: a block that
    /// stops the route must not wait for the route).
    func evaluateObservers(waitingUnless isAbandoned: () -> Bool) {
        guard let group = fireDueObservers() else { return }
        while group.wait(timeout: .now() + 0.01) == .timedOut && !isAbandoned() {}
    }

    /// Fires the observers that are due; returns the group their blocks run in, nil if none was due.
    private func fireDueObservers() -> DispatchGroup? {
        let time = timebase.currentTime()
        let generation = timebase.generation
        let rate = timebase.rate
        let due = state.withLock { state -> [(TimeObserverSchedule.ID, Observer, MediaTime)] in
            guard !state.schedule.isEmpty else { return [] }
            return state.schedule.advance(to: time, generation: generation, rate: rate).compactMap { firing in
                state.observers[firing.id].map { (firing.id, $0, firing.time) }
            }
        }
        guard !due.isEmpty else { return nil }
        let group = DispatchGroup()
        for (id, observer, firingTime) in due {
            let block = observer.block
            observer.queue.async(group: group) { [weak self] in
                // An observer removed after it became due must not run.
                guard let self, self.state.withLock({ $0.observers[id] != nil }) else { return }
                block(firingTime)
            }
        }
        return group
    }

    /// Arms the observer timer for when the next observer is due (at most `maximumObserverSleep`
    /// away, so that clock drift is caught), or disarms it when nothing can become due: no
    /// observers, a stopped timeline, or an as-fast-as-possible route that evaluates by itself.
    private func updateTimer() {
        while !armOrDisarmTimer() {}
    }

    /// `updateTimer`'s one attempt: false, and nothing done, when the timebase changed between
    /// reading it and taking the lock. Armed in one lock section, so that a stale "disarm" cannot
    /// undo a newer arming; and only from a timebase read after its last change, since a rate of 0
    /// read before a start, acted on after the start's timer fired, disarms it for good (a
    /// playlist's end never fired: `longform play` played silence on).
    private func armOrDisarmTimer() -> Bool {
        let generation = timebase.generation
        let clockIsFrameDriven = (timebase.clock as? RouteTimebaseClock)?.clock.isDrivenByFramesWritten ?? false
        let now = timebase.currentTime()
        let rate = timebase.rate
        return state.withLock { state in
            guard timebase.generation == generation else { return false }
            let delay: Double? = {
                guard !state.schedule.isEmpty, !clockIsFrameDriven else { return nil }
                // A change (a jump, a start or a stop) is evaluated at once.
                if state.needsEvaluation { return 0 }
                guard rate > 0, let due = state.schedule.nextDueTime(at: now) else { return nil }
                return min(max((due - now).seconds / rate, 0), Self.maximumObserverSleep)
            }()
            guard let delay else {
                state.timer?.cancel()
                state.timer = nil
                return true
            }
            if state.timer == nil {
                let timer = DispatchSource.makeTimerSource(queue: tickQueue)
                timer.setEventHandler { [weak self] in
                    guard let self else { return }
                    self.state.withLock { $0.needsEvaluation = false }
                    self.evaluateObservers()
                    self.updateTimer()
                }
                timer.schedule(deadline: .now() + delay, leeway: .microseconds(500))
                timer.resume()
                state.timer = timer
            } else {
                state.timer?.schedule(deadline: .now() + delay, leeway: .microseconds(500))
            }
            return true
        }
    }

    deinit {
        state.withLock { $0.timer?.cancel() }
    }
}
