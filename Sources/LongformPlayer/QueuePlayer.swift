import Dispatch
import Logging
import LongformCore
import LongformRendering
import LongformSources
import Synchronization

/// Plays a fixed list of items once, back to back and gapless, through a renderer and synchronizer:
/// the engine's plain player, used by `longform render` and `longform play`. Each item is opened
/// when its turn comes; one that fails is reported and skipped, and the timeline stays exact.
/// (The editable playlist, `SampleBufferPlayer`, builds on the same renderer contract.)
public final class QueuePlayer: @unchecked Sendable {
    /// What happened to one item.
    public enum Event: Sendable {
        /// The item begins at `time` on the timeline.
        case itemStarted(index: Int, location: String, metadata: AudioMetadata, time: MediaTime)
        /// The item could not be played (or stopped early); playback goes on with the next.
        case itemFailed(index: Int, error: SourceError)
        /// Everything has played; the timeline ends at `time`.
        case finished(time: MediaTime)
    }

    private struct Placement {
        var index: Int
        var start: MediaTime
        var end: MediaTime?
    }

    private struct State {
        var index = 0
        var source: AudioFileSource?
        /// Timeline time of the current item's frame 0.
        var itemBase: MediaTime = .zero
        /// Frames the current item has delivered.
        var deliveredEnd: MediaTime = .zero
        var placements: [Placement] = []
        var isFinished = false
        var hasCompleted = false
        var failures: [SourceError] = []
        var observerTokens: [RenderSynchronizer.TimeObserverToken] = []
    }

    /// The items, as paths or URLs.
    public let items: [String]
    private let renderer: AudioRenderer
    private let synchronizer: RenderSynchronizer
    private let queue = DispatchQueue(label: "longform.queueplayer")
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)
    private let eventHandler: @Sendable (Event) -> Void
    private let logger = Logger(label: "longform.player")
    private var flushToken: AudioRenderer.ObservationToken?

    /// A player for `items` on `renderer`, which must already be added to `synchronizer`.
    public init(items: [String], renderer: AudioRenderer, synchronizer: RenderSynchronizer, events: @escaping @Sendable (Event) -> Void = { _ in }) {
        self.items = items
        self.renderer = renderer
        self.synchronizer = synchronizer
        self.eventHandler = events
    }

    /// The items that failed, with their reasons.
    public var failures: [SourceError] { state.withLock { $0.failures } }

    /// Starts enqueueing and sets the rate to 1 (once enough audio is enqueued).
    public func play() {
        flushToken = renderer.observeFlushedAutomatically(on: queue) { [weak self] time in self?.resume(afterAutomaticFlushAt: time) }
        renderer.requestMediaDataWhenReady(on: queue) { [weak self] in self?.provideMediaData() }
        synchronizer.setRate(1, time: .zero)
    }

    /// Blocks until the last item has been heard (or rendered).
    public func waitUntilFinished() { finished.wait() }

    /// Stops playback now; `waitUntilFinished()` returns.
    public func stop() {
        renderer.stopRequestingMediaData()
        complete(at: synchronizer.currentTime())
    }

    // MARK: - Enqueueing (on `queue`)

    private func provideMediaData() {
        while renderer.isReadyForMoreMediaData {
            guard let buffer = nextBuffer() else {
                finishEnqueueing()
                return
            }
            renderer.enqueue(buffer)
        }
    }

    /// The next buffer on the timeline, opening the next item when one ends.
    private func nextBuffer() -> SampleBuffer? {
        while true {
            let (index, source) = state.withLock { ($0.index, $0.source) }
            guard index < items.count else { return nil }
            guard let source else {
                openItem(at: index)
                continue
            }
            do {
                if var buffer = try source.nextSampleBuffer() {
                    let base = state.withLock { $0.itemBase }
                    buffer.outputPresentationTime = base + buffer.presentationTime + buffer.trimDurationAtStart
                    state.withLock { $0.deliveredEnd = buffer.outputEndTime }
                    return buffer
                }
            } catch {
                report(.itemFailed(index: index, error: error))
                state.withLock { $0.failures.append(error) }
            }
            closeItem()
        }
    }

    private func openItem(at index: Int) {
        do {
            let source = try AudioFileSource(location: items[index])
            let base = state.withLock { state -> MediaTime in
                state.source = source
                state.deliveredEnd = state.itemBase
                state.placements.append(Placement(index: index, start: state.itemBase))
                return state.itemBase
            }
            let metadata = source.metadata
            let location = items[index]
            // Announce the item when it is heard, not when it is enqueued.
            let token = synchronizer.addBoundaryTimeObserver(forTimes: [base], queue: queue) { [weak self] _ in
                self?.report(.itemStarted(index: index, location: location, metadata: metadata, time: base))
            }
            state.withLock { $0.observerTokens.append(token) }
        } catch {
            logger.error("\(error)")
            report(.itemFailed(index: index, error: error))
            state.withLock {
                $0.failures.append(error)
                $0.index += 1
            }
        }
    }

    private func closeItem() {
        state.withLock { state in
            // The next item starts exactly where this one's audio ended.
            state.itemBase = state.deliveredEnd
            if !state.placements.isEmpty { state.placements[state.placements.count - 1].end = state.deliveredEnd }
            state.source = nil
            state.index += 1
        }
    }

    private func finishEnqueueing() {
        let end = state.withLock { state -> MediaTime? in
            guard !state.isFinished else { return nil }
            state.isFinished = true
            return state.itemBase
        }
        guard let end else { return }
        if end <= .zero {
            renderer.stopRequestingMediaData()
            complete(at: end)
            return
        }
        // The end boundary goes in before the request stops: an as-fast-as-possible route waits for
        // data while a request is active, and must find the boundary in place when it stops waiting.
        let token = synchronizer.addBoundaryTimeObserver(forTimes: [end], queue: queue) { [weak self] time in
            self?.complete(at: time)
        }
        state.withLock { $0.observerTokens.append(token) }
        renderer.stopRequestingMediaData()
        // A real-time route may have played past the end already (the last item took longer to
        // open than the audio left): the boundary then never comes.
        if synchronizer.currentTime() >= end { complete(at: end) }
    }

    private func complete(at time: MediaTime) {
        let isFirst = state.withLock { state -> Bool in
            defer { state.hasCompleted = true }
            return !state.hasCompleted
        }
        guard isFirst else { return }
        for token in state.withLock({ state in defer { state.observerTokens.removeAll() }; return state.observerTokens }) {
            synchronizer.removeTimeObserver(token)
        }
        synchronizer.setRate(0, time: .invalid)
        report(.finished(time: time))
        finished.signal()
    }

    /// After a route change: reopen the item that was playing at `time` and enqueue from exactly there.
    private func resume(afterAutomaticFlushAt time: MediaTime) {
        renderer.stopRequestingMediaData()
        renderer.flush()
        let placement = state.withLock { state -> Placement? in
            state.isFinished = false
            return state.placements.last { $0.start <= time && ($0.end.map { time < $0 } ?? true) }
        }
        guard let placement else {
            complete(at: time)
            return
        }
        do {
            let source = try AudioFileSource(location: items[placement.index])
            try source.seek(to: time - placement.start)
            state.withLock { state in
                state.index = placement.index
                state.source = source
                state.itemBase = placement.start
                state.deliveredEnd = time
                state.placements.removeAll { $0.start > placement.start }
                state.placements[state.placements.count - 1].end = nil
            }
            logger.info("resuming item \(placement.index + 1) at \((time - placement.start).seconds) s after a route change")
        } catch {
            report(.itemFailed(index: placement.index, error: error))
        }
        renderer.requestMediaDataWhenReady(on: queue) { [weak self] in self?.provideMediaData() }
    }

    private func report(_ event: Event) { eventHandler(event) }
}
