import Dispatch
import Logging
import LongformCore
import LongformRendering
import LongformSources

/// The enqueueing logic of the player, after the sample's SampleBufferSerializer: it owns the
/// renderer and synchronizer, places items back to back on the timeline, enqueues across item
/// boundaries as far ahead as the route's look-ahead, and follows the playhead from item to item
/// with a boundary observer at each item's end.
///
/// An edit takes one of two paths. `continuePlayback(with:)` keeps the items that did not change
/// and the audio already enqueued for them, and flushes only from the first changed item (never
/// behind the playhead: when the route has already been handed audio past that point, the cut
/// moves to the playhead and the new items start there). `restart(with:atOffset:rate:)` flushes
/// everything and starts over.
///
/// Everything here runs on `queue`; the player calls in from there and gets its events there.
final class SampleBufferSerializer: @unchecked Sendable {
    /// What the serializer tells the player.
    enum Event {
        /// The item heard now changed (or was restarted); nil when the playlist has played to its end.
        case currentItemChanged(SampleBufferItem?)
        /// An item could not be opened or decoded and was skipped.
        case itemFailed(SampleBufferItem, SourceError)
        /// An item was opened and its entry changed (tags learnt, an earlier failure cleared).
        case itemEntryChanged(SampleBufferItem)
        /// The periodic offset of the current item.
        case offsetChanged(MediaTime)
        /// The rate the timeline runs at changed (0 or 1).
        case rateChanged(Double)
    }

    /// How often the current item's offset is reported.
    static let offsetInterval = MediaTime(value: 1, timescale: 10)
    /// The most audio one call of the request block enqueues, so that an edit never waits long
    /// behind it, in seconds.
    static let enqueueSlice = 2.0
    /// Audio due less than this past the playhead after a wait for the network counts as late
    /// (the route renders on while it is enqueued).
    static let lateAudioThreshold = MediaTime(value: 2, timescale: 100)
    /// How far past the playhead audio that came late is placed: the route takes it whole.
    static let lateAudioMargin = MediaTime(value: 1, timescale: 10)

    let queue: DispatchQueue
    let renderer: AudioRenderer
    let synchronizer: RenderSynchronizer
    /// Receives the events, on `queue`.
    var eventHandler: (Event) -> Void = { _ in }

    /// The current item first, then the items after it; finished items leave from the front.
    private(set) var items: [SampleBufferItem] = []
    /// The item giving buffers now (`items.count` when everything is enqueued).
    private var enqueuingIndex = 0
    /// Where the next item's zero goes on the timeline: the end of the last fully enqueued item.
    private var nextItemBase: MediaTime = .zero
    /// The end of the latest audio enqueued: a restart places its items past it (see `restartBatched`).
    private var enqueuedTimelineEnd: MediaTime = .zero
    /// The rate wanted: 0 paused, 1 playing.
    private(set) var rate: Double = 0
    /// The rate last reported, so that the momentary stop inside a restart is not reported.
    private var reportedRate: Double = 0
    private var periodicObserver: RenderSynchronizer.TimeObserverToken?
    private var flushObserver: AudioRenderer.ObservationToken?
    /// The one item whose source is opened ahead (see `prepareSource(of:)`).
    private var preparedItem: SampleBufferItem?
    /// Set by `invalidate()`: nothing is opened ahead any more (a preparation queued before it
    /// would otherwise hold a file open for as long as the items live).
    private var isInvalidated = false
    /// Set when a URL's next audio was not there yet: the first buffer enqueued after the wait is
    /// checked against the playhead (see `placeAfterWait(_:of:)`).
    private var hasWaitedForNetwork = false
    private let logger = Logger(label: LogLabel.serializer)

    /// A serializer that plays through `renderer` on `synchronizer`.
    init(renderer: AudioRenderer, synchronizer: RenderSynchronizer, queue: DispatchQueue) {
        self.renderer = renderer
        self.synchronizer = synchronizer
        self.queue = queue
        // The serializer prerolls synchronously before it sets the rate, so a rate change never has
        // to wait; and the renderer cannot judge "sufficient" for a jump that has not happened yet.
        synchronizer.delaysRateChangeUntilHasSufficientMediaData = false
        flushObserver = renderer.observeFlushedAutomatically(on: queue) { [weak self] time in
            self?.resume(afterAutomaticFlushAt: time)
        }
    }

    /// Whether the current item's offset is reported every `offsetInterval` while playing. Off,
    /// nothing wakes up between item boundaries: each tick costs a thread wake-up or two (about
    /// 0.1 s of CPU per minute here), and stops an as-fast-as-possible route.
    var reportsOffsets: Bool {
        get { periodicObserver != nil }
        set {
            guard newValue != reportsOffsets else { return }
            if newValue {
                periodicObserver = synchronizer.addPeriodicTimeObserver(forInterval: Self.offsetInterval, queue: queue) { [weak self] time in
                    self?.periodicTick(at: time)
                }
            } else if let periodicObserver {
                synchronizer.removeTimeObserver(periodicObserver)
                self.periodicObserver = nil
            }
        }
    }

    /// Ends playback and removes the observers.
    func invalidate() {
        stopEnqueuing()
        releasePreparedSource()
        isInvalidated = true
        if let periodicObserver { synchronizer.removeTimeObserver(periodicObserver) }
        if let flushObserver { renderer.removeObserver(flushObserver) }
        periodicObserver = nil
        flushObserver = nil
    }

    /// The item heard now.
    var currentItem: SampleBufferItem? { items.first }

    /// How far into the current item the playhead is.
    var currentOffset: MediaTime? {
        guard let item = items.first, let base = item.timelineBase else { return items.first?.startOffset }
        let offset = synchronizer.currentTime() - base
        return offset < item.startOffset ? item.startOffset : offset
    }

    // MARK: - The two paths

    /// Flushes everything and plays `newItems` from `offset` into the first, at `rate`.
    /// `timelineTime` is where the first frame goes on the timeline (nil: at times not used before,
    /// see `restartBatched`; given when the timeline must go on, as after a route change).
    func restart(with newItems: [SampleBufferItem], atOffset offset: MediaTime, rate: Double, timelineTime: MediaTime? = nil) {
        // The pause, the flush, the preroll and the start reach a rewindable route as one change.
        renderer.batchingRewinds { restartBatched(with: newItems, atOffset: offset, rate: rate, timelineTime: timelineTime) }
    }

    private func restartBatched(with newItems: [SampleBufferItem], atOffset offset: MediaTime, rate: Double, timelineTime: MediaTime?) {
        // A restart goes on at timeline times never used before, a whole second past the audio
        // enqueued and the time heard (unless `timelineTime` says where: a route change goes on
        // from the flush time on a route with no earlier frames): a rewindable route may render
        // frames before the restart again on the old timeline (its clock or margin moved), and at
        // reused times those would read the new items' audio (a few milliseconds of it heard
        // ahead of its start).
        let used = max(enqueuedTimelineEnd, synchronizer.currentTime())
        let startTime = timelineTime ?? (used > .zero ? MediaTime(value: Int64(used.seconds.rounded(.up)) + 1, timescale: 1) + offset : offset)
        // The first item keeps its source if it is open (a seek within the item playing); a
        // prepared source stays open too.
        let first = newItems.first
        stopEnqueuing(keepingSourceOf: first)
        items = newItems
        for item in items {
            item.startOffset = .zero
            item.flushSource(keepingSource: item === first)
        }
        items.first?.startOffset = offset
        enqueuingIndex = 0
        nextItemBase = startTime - offset
        self.rate = rate
        logger.info("restart: \(newItems.count) item(s) from \(offset.seconds) s of \(newItems.first?.playlistItem.displayTitle ?? "nothing"), rate \(rate)")
        // Enough for a smooth start goes in before the rate is set, so that the start is not delayed.
        provideMediaData(seconds: renderer.preferredPrerollDuration, whetherReady: true)
        // Always announced: the item that plays may not be the first asked for (that one failed).
        reconcile(at: startTime, announcing: nil)
        if enqueuingIndex < items.count { startRequesting() }
        if !items.isEmpty { synchronizer.setRate(rate, time: startTime) }
        reportRateIfChanged()
    }

    /// Plays on with `newItems`, whose first item is the current one: the items that match the
    /// present ones from the front keep their enqueued audio, and the renderer is flushed from the
    /// start of the first one that changed. If the current item itself changed, restarts.
    func continuePlayback(with newItems: [SampleBufferItem]) {
        var isRestart = false
        // The cut and the first audio after it reach a rewindable route as one change.
        renderer.batchingRewinds {
            isRestart = !continuePlaybackBatched(with: newItems)
        }
        if isRestart { restart(with: newItems, atOffset: .zero, rate: rate) }
    }

    /// Returns false when nothing of the present items stays: the caller restarts.
    private func continuePlaybackBatched(with newItems: [SampleBufferItem]) -> Bool {
        var matching = 0
        while matching < min(items.count, newItems.count), items[matching] === newItems[matching], items[matching].isEnqueued {
            matching += 1
        }
        guard matching > 0 else { return false }
        let last = items[matching - 1]
        if last.isFullyEnqueued, let split = last.timelineEnd {
            // Everything from the first changed item on goes; if the route already has audio past
            // that point, the cut moves to the playhead and the changed items start there.
            let cut = renderer.flushFromPlayhead(notBefore: split)
            if cut > split {
                logger.info("partial flush at \(split.seconds) s was too close to the playhead: cut at \(cut.seconds) s instead")
            } else {
                logger.info("partial flush from \(split.seconds) s, keeping \(matching) item(s)")
            }
            nextItemBase = cut
            enqueuingIndex = matching
        } else {
            // The last matching item is still being enqueued: nothing after it is in the renderer.
            logger.info("continue: item \(matching) still enqueueing, the items after it change")
            enqueuingIndex = matching - 1
        }
        // The old tail and the new one both start over (taking an item off twice is harmless).
        for item in items[matching...] + newItems[matching...] { takeOffTimeline(item) }
        for item in newItems[matching...] { item.startOffset = .zero }
        items = Array(items[..<matching]) + newItems[matching...]
        if enqueuingIndex < items.count {
            // The first audio of the changed items goes in now, not when the request block runs.
            provideMediaData(seconds: renderer.preferredPrerollDuration, whetherReady: true)
        }
        if enqueuingIndex < items.count {
            startRequesting()
        } else {
            finishEnqueueing()
        }
        prepareNextItemSoon()
        return true
    }

    /// Sets the rate (0 pauses, 1 plays) from where the timeline is.
    func setRate(_ newRate: Double) {
        rate = newRate
        guard !items.isEmpty else { return }
        synchronizer.setRate(newRate, time: .invalid)
        reportRateIfChanged()
    }

    /// Stops and forgets every item.
    func stop() {
        stopEnqueuing()
        releasePreparedSource()
        items = []
        enqueuingIndex = 0
        rate = 0
        reportRateIfChanged()
    }

    /// Opens `item`'s source ahead (see `SampleBufferItem.prepareSource()`), so that the command
    /// that starts it is heard sooner: the item after the current one, or the one a play from
    /// stopped starts with. Closes the source prepared before if it was not used, so that at most
    /// one source is held open this way.
    func prepareSource(of item: SampleBufferItem) {
        guard !isInvalidated else { return }
        if preparedItem !== item { releasePreparedSource() }
        let (isPrepared, isEntryChanged) = item.prepareSource()
        preparedItem = isPrepared ? item : nil
        if isEntryChanged { eventHandler(.itemEntryChanged(item)) }
    }

    /// Closes the source opened ahead, if it is still unread.
    func releasePreparedSource() {
        preparedItem?.releasePreparedSource()
        preparedItem = nil
    }

    /// Prepares the item after the current one once the work in hand is done: after a command,
    /// its audio reaches the route first (a rewindable route's rewind waits for the end of the
    /// batch it is in, and opening a file took most of a millisecond).
    private func prepareNextItemSoon() {
        queue.async { [weak self] in self?.prepareNextItem() }
    }

    /// Prepares the item after the current one, or closes what was prepared when the current item
    /// is the last. Stopped (no items), what is prepared is the player's choice and stays.
    private func prepareNextItem() {
        guard !items.isEmpty else { return }
        if items.count > 1 {
            prepareSource(of: items[1])
        } else {
            releasePreparedSource()
        }
    }

    /// Drops the items the playhead has passed, so that the current item is the one heard now,
    /// also when a boundary observer has not run yet (it is queued behind this call) or was missed.
    func reconcile() {
        guard let time = playheadForReconciling() else { return }
        reconcile(at: time, announcing: items.first)
    }

    // MARK: - Enqueueing

    private func startRequesting() {
        renderer.requestMediaDataWhenReady(on: queue) { [weak self] in
            self?.provideMediaData(seconds: Self.enqueueSlice, whetherReady: false)
        }
    }

    /// Enqueues up to `seconds` of audio while the renderer is ready (or regardless), across items.
    private func provideMediaData(seconds: Double, whetherReady: Bool) {
        var enqueued = 0.0
        while enqueued < seconds && (whetherReady || renderer.isReadyForMoreMediaData) {
            guard enqueuingIndex < items.count else {
                finishEnqueueing()
                return
            }
            let item = items[enqueuingIndex]
            if item.timelineBase == nil { item.timelineBase = nextItemBase }
            do {
                // A preroll decodes no more than it needs, so that a start or a seek is heard sooner.
                let maximumDuration = whetherReady ? seconds - enqueued : nil
                var buffer: SampleBuffer
                switch try item.nextSampleBuffer(maximumDuration: maximumDuration, entryChanged: { eventHandler(.itemEntryChanged(item)) }) {
                case .buffer(let next): buffer = next
                case .end:
                    itemDidFinishEnqueueing(item)
                    continue
                case .pending:
                    // The renderer's request block asks again shortly; nothing after the item is
                    // enqueued before it, so that items join gaplessly when the audio comes.
                    hasWaitedForNetwork = true
                    return
                }
                if hasWaitedForNetwork { placeAfterWait(buffer, of: item) }
                buffer.outputPresentationTime = item.timelineBase! + buffer.presentationTime + buffer.trimDurationAtStart
                renderer.enqueue(buffer)
                enqueued += buffer.outputDuration.seconds
                enqueuedTimelineEnd = max(enqueuedTimelineEnd, buffer.outputEndTime)
            } catch {
                logger.error("item failed, skipped: \(error)")
                eventHandler(.itemFailed(item, error))
                itemDidFinishEnqueueing(item)
            }
        }
    }

    /// The first buffer after a wait for the network: if the playhead has passed where it
    /// belongs (the renderer ran dry meanwhile and the route played silence), the item moves
    /// later on the timeline, so that it is heard from there whole instead of losing its head;
    /// the silence stays where it was heard.
    private func placeAfterWait(_ buffer: SampleBuffer, of item: SampleBufferItem) {
        hasWaitedForNetwork = false
        // An as-fast-as-possible route waits for the audio: its timeline never passes it.
        guard renderer.route.pacing == .realTime, let base = item.timelineBase, let playhead = renderer.playheadTime else { return }
        let start = base + buffer.presentationTime + buffer.trimDurationAtStart
        // Paused, the playhead stands still: only audio it already passed is late.
        guard start < playhead + (rate != 0 ? Self.lateAudioThreshold : .zero) else { return }
        let heardStart = playhead + Self.lateAudioMargin
        let shift = heardStart - start
        logger.info("\(item.playlistItem.displayTitle): audio came \(String(format: "%.2f", shift.seconds)) s after its time (waiting for the network); placed later by as much")
        item.timelineBase = base + shift
        // The items before it end, as heard, where it starts now: their boundaries (already
        // passed: an observer added for a past time does not fire) move there.
        for earlier in items[..<enqueuingIndex] where earlier.boundaryObserver != nil {
            synchronizer.removeTimeObserver(earlier.boundaryObserver!)
            earlier.boundaryObserver = synchronizer.addBoundaryTimeObserver(forTimes: [heardStart], queue: queue) { [weak self] time in
                self?.reconcile(at: time, announcing: self?.items.first)
            }
        }
    }

    private func itemDidFinishEnqueueing(_ item: SampleBufferItem) {
        guard let end = item.timelineEnd else { return }
        logger.debug("enqueued \(item.playlistItem.displayTitle) to its end, at \(end.seconds) s")
        nextItemBase = end
        enqueuingIndex += 1
        // An item that yielded nothing (failed, empty, or sought past its end) gets no boundary of
        // its own: the previous item's boundary is at the same instant and passes it too.
        if item.endOffset > item.startOffset {
            item.boundaryObserver = synchronizer.addBoundaryTimeObserver(forTimes: [end], queue: queue) { [weak self] time in
                self?.reconcile(at: time, announcing: self?.items.first)
            }
        }
    }

    /// Everything is enqueued: tell the renderer the data ends here.
    private func finishEnqueueing() {
        renderer.stopRequestingMediaData()
    }

    private func stopEnqueuing(keepingSourceOf kept: SampleBufferItem? = nil) {
        hasWaitedForNetwork = false
        renderer.stopRequestingMediaData()
        synchronizer.setRate(0, time: .invalid)
        renderer.flush()
        for item in items { takeOffTimeline(item, keepingSource: item === kept) }
    }

    private func reportRateIfChanged() {
        let now = synchronizer.rate
        guard now != reportedRate else { return }
        reportedRate = now
        eventHandler(.rateChanged(now))
    }

    private func takeOffTimeline(_ item: SampleBufferItem, keepingSource: Bool = false) {
        if let observer = item.boundaryObserver { synchronizer.removeTimeObserver(observer) }
        item.boundaryObserver = nil
        item.flushSource(keepingSource: keepingSource)
    }

    // MARK: - Following the playhead

    private func periodicTick(at time: MediaTime) {
        guard !items.isEmpty else { return }
        if synchronizer.timebase.isLatestChangeHeard { reconcile(at: time, announcing: items.first) }
        if let offset = currentOffset { eventHandler(.offsetChanged(offset)) }
    }

    /// The timeline time to reconcile at: what is heard now, unless a restart is not heard yet
    /// (the time then still belongs to the items before it).
    private func playheadForReconciling() -> MediaTime? {
        guard !items.isEmpty, synchronizer.timebase.isLatestChangeHeard else { return nil }
        return synchronizer.currentTime()
    }

    /// Drops the items that end at or before `time`; announces the new current item if it is not
    /// `previous`, and the end of the playlist when nothing is left (also if nothing was there).
    private func reconcile(at time: MediaTime, announcing previous: SampleBufferItem?) {
        while let first = items.first, first.isFullyEnqueued, let end = first.timelineEnd, end <= time {
            takeOffTimeline(first)
            items.removeFirst()
            enqueuingIndex = max(enqueuingIndex - 1, 0)
        }
        guard items.first !== previous || items.isEmpty else { return }
        if let current = items.first {
            logger.info("now playing \(current.playlistItem.displayTitle) from \(current.startOffset.seconds) s")
        } else {
            logger.info("the playlist has played to its end")
            rate = 0
            synchronizer.setRate(0, time: .invalid)
            reportRateIfChanged()
        }
        eventHandler(.currentItemChanged(items.first))
        // Another item is current: the one after it is the one to open ahead now.
        prepareNextItemSoon()
    }

    /// After a route change: play on from the flush time, in the item that was playing then.
    private func resume(afterAutomaticFlushAt time: MediaTime) {
        guard !items.isEmpty else { return }
        // The item the flush time falls in: the last one placed that starts at or before it.
        let index = items.lastIndex { item in item.timelineStart.map { $0 <= time } ?? false } ?? 0
        let item = items[index]
        var offset = time - (item.timelineBase ?? .zero)
        if offset < item.startOffset { offset = item.startOffset }
        logger.info("route flushed at \(time.seconds) s: resuming \(item.playlistItem.displayTitle) at \(offset.seconds) s")
        restart(with: Array(items[index...]), atOffset: offset, rate: rate, timelineTime: time)
    }
}
