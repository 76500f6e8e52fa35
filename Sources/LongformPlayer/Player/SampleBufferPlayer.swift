import Dispatch
import Foundation
import Logging
import LongformCore
import LongformRendering
import LongformSources
import Synchronization

/// A playlist that can be edited while it plays, after the sample's SampleBufferPlayer: the
/// public, thread-safe API over a `SampleBufferSerializer`. Every method may be called from any
/// thread, also from an event handler; it returns once the change is made, so that what it
/// changes is heard from the next frame the route asks for.
///
/// Edits that leave the current item in place go on without interrupting it (only the audio of
/// changed items is flushed); edits that change the current item restart. Removing the current
/// item goes on with the one after it; `next` on the last item stops; an item that fails is
/// marked failed and skipped.
public final class SampleBufferPlayer: @unchecked Sendable {
    /// One playlist entry: a stable id, the item, and why it failed if it did.
    public struct Entry: Sendable, Equatable, Identifiable {
        /// Unique to this entry; the same URL twice gets two ids.
        public let id: UUID
        /// Where the audio is and its tags.
        public var item: PlaylistItem
        /// Why the item could not be played the last time it was tried.
        public var failure: SourceError?

        /// An entry with a known id (one saved earlier).
        public init(id: UUID, item: PlaylistItem, failure: SourceError? = nil) {
            self.id = id
            self.item = item
            self.failure = failure
        }
    }

    /// A registration from `addEventHandler`; pass it to `removeEventHandler`.
    public final class EventHandlerToken: Sendable {
        fileprivate let id: Int
        fileprivate init(id: Int) { self.id = id }
    }

    /// What any thread can read without waiting for the player's queue.
    private struct Snapshot {
        var entries: [Entry] = []
        var currentIndex: Int?
        var state: PlaybackState = .stopped
    }

    /// The renderer the player enqueues into.
    public let renderer: AudioRenderer
    /// The synchronizer whose timeline the player follows.
    public let synchronizer: RenderSynchronizer
    private let queue = DispatchQueue(label: "longform.player")
    private let tagQueue = DispatchQueue(label: "longform.player.tags", qos: .utility)
    private let readsTagsAhead: Bool
    private let queueKey = DispatchSpecificKey<Bool>()
    private let serializer: SampleBufferSerializer
    private let snapshot = Mutex(Snapshot())
    private struct Handler {
        var wantsOffsets: Bool
        var block: @Sendable (PlayerEvent) -> Void
    }
    private let handlers = Mutex<[Int: Handler]>([:])
    private let nextHandlerID = Atomic<Int>(0)
    private let logger = Logger(label: LogLabel.player)

    // On `queue` only.
    private var items: [SampleBufferItem] = []
    private var currentPosition: Int?
    private var state: PlaybackState = .stopped
    /// The item last announced as current, so that a restart of the same item is not announced again.
    private var announcedItem: SampleBufferItem?
    /// Where `play()` starts from when stopped.
    private var resumeIndex = 0

    /// A player on `renderer`, which plays once it is added to `synchronizer`. With
    /// `readsTagsAhead`, the tags of added items are read in the background, so that a playlist
    /// shows titles before the items play; otherwise they become known as each item opens.
    public init(renderer: AudioRenderer, synchronizer: RenderSynchronizer, readsTagsAhead: Bool = true) {
        self.renderer = renderer
        self.synchronizer = synchronizer
        self.readsTagsAhead = readsTagsAhead
        queue.setSpecific(key: queueKey, value: true)
        serializer = SampleBufferSerializer(renderer: renderer, synchronizer: synchronizer, queue: queue)
        serializer.eventHandler = { [unowned self] event in serializerDidReport(event) }
    }

    /// Stops playback and releases the observers; the player must not be used afterwards.
    public func invalidate() {
        perform {
            serializer.invalidate()
            items = []
            currentPosition = nil
            publish()
        }
    }

    // MARK: - State

    /// The playlist.
    public var entries: [Entry] { snapshot.withLock { $0.entries } }
    /// Stopped, playing or paused.
    public var playbackState: PlaybackState { snapshot.withLock { $0.state } }
    /// The position of the current item in the playlist; nil when stopped.
    public var currentIndex: Int? { snapshot.withLock { $0.currentIndex } }
    /// The current item; nil when stopped.
    public var currentEntry: Entry? {
        snapshot.withLock { snapshot in snapshot.currentIndex.map { snapshot.entries[$0] } }
    }
    /// How far into the current item the playhead is; nil when stopped.
    public var currentOffset: MediaTime? { perform { currentPosition == nil ? nil : serializer.currentOffset } }
    /// The rate: 0 paused or stopped, 1 playing.
    public var rate: Double { synchronizer.rate }

    // MARK: - Events

    /// Calls `handler` with every event, on the player's queue, in order. The handler may call
    /// the player; it should not block. `offsetChanged` events (every 0.1 s while playing) come
    /// only while some handler asks for them with `includingOffsets`: they cost wake-ups.
    @discardableResult
    public func addEventHandler(includingOffsets: Bool = true, _ handler: @escaping @Sendable (PlayerEvent) -> Void) -> EventHandlerToken {
        let id = nextHandlerID.add(1, ordering: .relaxed).newValue
        handlers.withLock { $0[id] = Handler(wantsOffsets: includingOffsets, block: handler) }
        updateOffsetReporting()
        return EventHandlerToken(id: id)
    }

    /// Stops calling a handler.
    public func removeEventHandler(_ token: EventHandlerToken) {
        _ = handlers.withLock { $0.removeValue(forKey: token.id) }
        updateOffsetReporting()
    }

    private func updateOffsetReporting() {
        let wanted = handlers.withLock { $0.values.contains { $0.wantsOffsets } }
        perform { serializer.reportsOffsets = wanted }
    }

    /// The events from now on, as an async sequence; ends when the consumer stops iterating.
    public func events() -> AsyncStream<PlayerEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: PlayerEvent.self)
        let token = addEventHandler { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in self?.removeEventHandler(token) }
        return stream
    }

    // MARK: - Playlist

    /// Adds items at the end.
    public func append(_ newItems: [PlaylistItem]) {
        perform { insertOnQueue(newItems, at: items.count) }
    }

    /// Inserts an item before position `index` (`index` == count appends).
    public func insert(_ item: PlaylistItem, at index: Int) throws(PlayerError) {
        try insert(contentsOf: [item], at: index)
    }

    /// Inserts items, in order, before position `index` (`index` == count appends): one edit.
    public func insert(contentsOf newItems: [PlaylistItem], at index: Int) throws(PlayerError) {
        try performThrowing { () throws(PlayerError) in
            guard (0...items.count).contains(index) else { throw .indexOutOfRange(index: index, count: items.count) }
            insertOnQueue(newItems, at: index)
        }
    }

    /// Removes the item at `index`. Removing the current item goes on with the one after it, from
    /// its start (or stops if it was the last).
    public func remove(at index: Int) throws(PlayerError) {
        try performThrowing { () throws(PlayerError) in
            try checkIndex(index)
            serializer.reconcile()
            let removed = items.remove(at: index)
            logger.info("remove \(index + 1): \(removed.playlistItem.displayTitle)")
            guard let current = currentPosition else { return didEditPlaylist() }
            if index < current {
                currentPosition = current - 1
                continueWithCurrentItems()
            } else if index == current {
                if index < items.count {
                    restart(at: index, offset: .zero)
                } else {
                    stopOnQueue()
                }
            } else {
                continueWithCurrentItems()
            }
            didEditPlaylist()
        }
    }

    /// Moves the item at `source` so that it ends up at position `destination`.
    public func move(from source: Int, to destination: Int) throws(PlayerError) {
        try performThrowing { () throws(PlayerError) in
            try checkIndex(source)
            try checkIndex(destination)
            serializer.reconcile()
            let current = currentPosition.map { items[$0] }
            let item = items.remove(at: source)
            items.insert(item, at: destination)
            logger.info("move \(source + 1) → \(destination + 1): \(item.playlistItem.displayTitle)")
            if let current {
                currentPosition = items.firstIndex { $0 === current }
                continueWithCurrentItems()
            }
            didEditPlaylist()
        }
    }

    /// Replaces the item at `index`; replacing the current item restarts with the replacement.
    public func replace(at index: Int, with item: PlaylistItem) throws(PlayerError) {
        try performThrowing { () throws(PlayerError) in
            try checkIndex(index)
            serializer.reconcile()
            items[index] = SampleBufferItem(item)
            readTags(of: [items[index]])
            logger.info("replace \(index + 1) with \(item.displayTitle)")
            if let current = currentPosition {
                if index == current {
                    restart(at: index, offset: .zero)
                } else {
                    continueWithCurrentItems()
                }
            }
            didEditPlaylist()
        }
    }

    /// Replaces the whole playlist. Playing or paused, the new list starts from its first item.
    public func replaceAll(with newItems: [PlaylistItem]) {
        perform {
            items = newItems.map { SampleBufferItem($0) }
            readTags(of: items)
            resumeIndex = 0
            logger.info("replace all: \(newItems.count) item(s)")
            if currentPosition != nil {
                if items.isEmpty { stopOnQueue() } else { restart(at: 0, offset: .zero) }
            }
            didEditPlaylist()
        }
    }

    /// Puts back a saved playlist, keeping its ids, and cues `currentIndex` at `offset`: playing
    /// if `isPlaying`, else paused. Without a current index the player is stopped.
    public func restore(_ saved: [Entry], currentIndex: Int?, offset: MediaTime, isPlaying: Bool) {
        perform {
            stopOnQueue()
            items = saved.map { SampleBufferItem($0.item, uniqueID: $0.id) }
            readTags(of: items)
            logger.info("restored \(saved.count) item(s)\(currentIndex.map { ", at item \($0 + 1), \(offset.seconds) s" } ?? "")")
            didEditPlaylist()
            guard let index = currentIndex, items.indices.contains(index) else { return }
            resumeIndex = index
            setState(isPlaying ? .playing : .paused)
            restart(at: index, offset: max(offset, .zero))
        }
    }

    // MARK: - Transport

    /// Plays: resumes when paused; when stopped, starts at the item that was current last (the
    /// first after the playlist ended).
    public func play() {
        perform {
            switch state {
            case .playing: return
            case .paused:
                logger.info("play")
                setState(.playing)
                serializer.setRate(1)
            case .stopped:
                guard !items.isEmpty else { return }
                setState(.playing)
                restart(at: min(resumeIndex, items.count - 1), offset: .zero)
            }
        }
    }

    /// Holds playback at the current offset.
    public func pause() {
        perform {
            guard state == .playing else { return }
            logger.info("pause")
            setState(.paused)
            serializer.setRate(0)
        }
    }

    /// Stops; `play()` starts again at the current item's start.
    public func stop() {
        perform { stopOnQueue() }
    }

    /// Plays the next item from its start; on the last item, stops.
    public func next() {
        perform {
            serializer.reconcile()
            guard let current = currentPosition else { return }
            logger.info("next")
            if current + 1 < items.count {
                restart(at: current + 1, offset: .zero)
            } else {
                stopOnQueue(resumingAt: 0)
            }
        }
    }

    /// Plays the previous item from its start; on the first item, plays it again from its start.
    public func previous() {
        perform {
            serializer.reconcile()
            guard let current = currentPosition else { return }
            logger.info("previous")
            restart(at: max(current - 1, 0), offset: .zero)
        }
    }

    /// Plays the item at `index` from `offset` into it. From stopped, starts playing.
    public func seek(toItemAt index: Int, offset: MediaTime = .zero) throws(PlayerError) {
        try performThrowing { () throws(PlayerError) in
            try checkIndex(index)
            logger.info("seek to item \(index + 1) at \(offset.seconds) s")
            if state == .stopped { setState(.playing) }
            restart(at: index, offset: max(offset, .zero))
        }
    }

    /// Moves within the current item to `offset`.
    public func seek(to offset: MediaTime) throws(PlayerError) {
        try performThrowing { () throws(PlayerError) in
            serializer.reconcile()
            guard let current = currentPosition else { throw .notPlaying(command: "seek") }
            logger.info("seek to \(offset.seconds) s")
            restart(at: current, offset: max(offset, .zero))
        }
    }

    /// Flushes and re-enqueues from the playhead, as a route change does (for scripted tests and
    /// for routes that reconfigure under the renderer).
    public func reconfigureRoute() throws(RouteError) {
        let route = renderer.route
        try renderer.setRoute(route)
        // The renderer announces the flush on the player's queue; wait until it is handled.
        perform {}
    }

    // MARK: - On the queue

    /// Reads the tags of items added without them, one at a time in the background, so that the
    /// playlist shows titles before the items play.
    private func readTags(of newItems: [SampleBufferItem]) {
        let pending = readsTagsAhead ? newItems.filter { $0.playlistItem.title == nil && $0.playlistItem.duration == nil } : []
        guard !pending.isEmpty else { return }
        tagQueue.async { [weak self] in
            for item in pending {
                guard let self, let metadata = try? AudioFileSource(location: item.playlistItem.location).metadata else { continue }
                self.queue.async {
                    guard self.items.contains(where: { $0 === item }) else { return }
                    item.adopt(metadata)
                    self.didEditPlaylist()
                }
            }
        }
    }

    private func insertOnQueue(_ newItems: [PlaylistItem], at index: Int) {
        serializer.reconcile()
        let added = newItems.map { SampleBufferItem($0) }
        readTags(of: added)
        items.insert(contentsOf: added, at: index)
        logger.info("insert \(newItems.count) item(s) at \(index + 1)")
        if let current = currentPosition {
            if index <= current { currentPosition = current + newItems.count }
            continueWithCurrentItems()
        }
        didEditPlaylist()
    }

    private func checkIndex(_ index: Int) throws(PlayerError) {
        guard items.indices.contains(index) else { throw .indexOutOfRange(index: index, count: items.count) }
    }

    private func restart(at index: Int, offset: MediaTime) {
        if state == .stopped { setState(.playing) }
        currentPosition = index
        serializer.restart(with: Array(items[index...]), atOffset: offset, rate: state == .playing ? 1 : 0)
        publish()
    }

    private func continueWithCurrentItems() {
        guard let current = currentPosition else { return }
        serializer.continuePlayback(with: Array(items[current...]))
    }

    /// Stops; a later `play()` starts at the item at `index` (the current one when nil).
    private func stopOnQueue(resumingAt index: Int? = nil) {
        guard state != .stopped else { return }
        logger.info("stop")
        resumeIndex = index ?? currentPosition ?? 0
        serializer.stop()
        currentPosition = nil
        announcedItem = nil
        emit(.currentItemChanged(index: nil, id: nil))
        setState(.stopped)
        prepareResumeItemSoon()
    }

    /// Once the work in hand is done, and if still stopped, opens the item `play()` would start
    /// with ahead of time, so that play is heard sooner.
    private func prepareResumeItemSoon() {
        queue.async { [weak self] in
            guard let self, state == .stopped else { return }
            let first = items.isEmpty ? nil : items[min(resumeIndex, items.count - 1)]
            // A URL is not downloaded while stopped: it may stay stopped for hours.
            if let first, !first.isNetwork {
                serializer.prepareSource(of: first)
            } else {
                serializer.releasePreparedSource()
            }
        }
    }

    private func setState(_ newState: PlaybackState) {
        guard newState != state else { return }
        state = newState
        publish()
        emit(.stateChanged(newState))
    }

    private func didEditPlaylist() {
        // An emptied playlist starts over: play after new items are added starts at the first.
        if items.isEmpty { resumeIndex = 0 }
        publish()
        emit(.playlistChanged)
        // Stopped, the item play starts with may be another one now.
        if state == .stopped { prepareResumeItemSoon() }
    }

    private func serializerDidReport(_ event: SampleBufferSerializer.Event) {
        switch event {
        case .currentItemChanged(let item):
            let index = item.flatMap { item in items.firstIndex { $0 === item } }
            if let index {
                let changed = currentPosition != index || announcedItem !== items[index]
                currentPosition = index
                announcedItem = items[index]
                publish()
                if changed {
                    let artwork = items[index].takeArtwork()
                    if let route = renderer.route as? any NowPlayingRoute {
                        let item = items[index].playlistItem
                        route.nowPlayingDidChange(NowPlayingInfo(title: item.displayTitle, artist: item.artist ?? "", album: item.album ?? "",
                                                                 artwork: artwork.map { NowPlayingArtwork(mimeType: $0.mimeType, data: $0.data) }))
                    }
                    emit(.currentItemChanged(index: index, id: items[index].uniqueID))
                }
            } else {
                // The playlist played to its end (or the current item left the list).
                resumeIndex = 0
                currentPosition = nil
                announcedItem = nil
                emit(.currentItemChanged(index: nil, id: nil))
                setState(.stopped)
                prepareResumeItemSoon()
            }
        case .itemFailed(let item, let error):
            publish()
            if let index = items.firstIndex(where: { $0 === item }) { emit(.itemFailed(index: index, id: item.uniqueID, error: error)) }
        case .itemEntryChanged:
            didEditPlaylist()
        case .offsetChanged(let offset):
            emit(.offsetChanged(offset))
        case .rateChanged(let rate):
            emit(.rateChanged(rate))
        }
    }

    /// Copies the state for readers on other threads.
    private func publish() {
        let entries = items.map { Entry(id: $0.uniqueID, item: $0.playlistItem, failure: $0.failure) }
        snapshot.withLock { snapshot in
            snapshot.entries = entries
            snapshot.currentIndex = currentPosition
            snapshot.state = state
        }
    }

    private func emit(_ event: PlayerEvent) {
        let offsets: Bool
        if case .offsetChanged = event { offsets = true } else { offsets = false }
        for handler in handlers.withLock({ $0.sorted { $0.key < $1.key }.map(\.value) }) where !offsets || handler.wantsOffsets {
            handler.block(event)
        }
    }

    /// Runs `body` on the player's queue and waits for it (at once when already there).
    private func perform<Result>(_ body: () -> Result) -> Result {
        if DispatchQueue.getSpecific(key: queueKey) == true { return body() }
        return queue.sync(execute: body)
    }

    private func performThrowing(_ body: () throws(PlayerError) -> Void) throws(PlayerError) {
        let result: Result<Void, PlayerError> = perform {
            do throws(PlayerError) {
                try body()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }
}
