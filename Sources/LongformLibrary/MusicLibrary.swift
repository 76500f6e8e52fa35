import Dispatch
import Foundation
import Logging
import LongformCore
import LongformSources
import LongformStore
import Synchronization

/// The music directories, scanned into the store's library: browsed and searched from the store,
/// rescanned on request and when files under the directories change. Scans run one at a time on
/// the library's own queue; background rescans asked for while one waits to start are that one.
public final class MusicLibrary: @unchecked Sendable {
    /// What one scan changed.
    public struct ScanSummary: Sendable, Equatable {
        /// Files new to the library.
        public var added: Int
        /// Files read again because they changed.
        public var updated: Int
        /// Files gone from the directories.
        public var removed: Int
        /// Files that could not be read (logged by name).
        public var unreadable: Int

        /// Whether the library is as it was (unreadable files change nothing in it).
        public var isEmpty: Bool { added == 0 && updated == 0 && removed == 0 }
    }

    /// The directories whose files may be played.
    public let directories: MusicDirectories
    private let store: PlayerStateStore
    private let queue = DispatchQueue(label: "longform.library.scan")
    private let isScanQueued = Atomic<Bool>(false)
    private let logger = Logger(label: LogLabel.library)
    private var watcher: DirectoryWatcher?
    private let onChange: @Sendable (ScanSummary) -> Void

    /// A library of `directories` kept in `store`; `onChange` is called after each scan that
    /// changed something.
    public init(directories: MusicDirectories, store: PlayerStateStore, onChange: @escaping @Sendable (ScanSummary) -> Void = { _ in }) {
        self.directories = directories
        self.store = store
        self.onChange = onChange
    }

    /// Scans now and waits for the result.
    @discardableResult
    public func rescan() throws(PlayerStateStore.StoreError) -> ScanSummary {
        let result: Result<ScanSummary, PlayerStateStore.StoreError> = queue.sync {
            do throws(PlayerStateStore.StoreError) { return .success(try scanOnQueue()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Scans in the background; asked again before that scan starts, it still scans once.
    public func rescanInBackground() {
        guard !isScanQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async { [self] in
            isScanQueued.store(false, ordering: .releasing)
            do { _ = try scanOnQueue() } catch { logger.error("library: cannot update: \(error)") }
        }
    }

    /// Scans in the background now, and again whenever files under the directories change.
    public func startWatching() {
        // Scanned even without directories: what an earlier run with other directories left is removed.
        rescanInBackground()
        guard watcher == nil, !directories.paths.isEmpty else { return }
        let watcher = DirectoryWatcher(directories: directories.paths) { [weak self] in self?.rescanInBackground() }
        self.watcher = watcher
        // Starting walks the directories to watch each one: on the library's queue, not the caller's thread.
        queue.async { watcher?.start() }
    }

    /// Stops watching for changes.
    public func stopWatching() {
        watcher?.stop()
        watcher = nil
    }

    private func scanOnQueue() throws(PlayerStateStore.StoreError) -> ScanSummary {
        let summary = try LibraryScanner(directories: directories, store: store).scan()
        if !summary.isEmpty {
            logger.info("library: \(summary.added) added, \(summary.updated) updated, \(summary.removed) removed")
            onChange(summary)
        }
        return summary
    }

    /// The tracks whose tags or path contain `search`, `limit` from `offset`.
    public func tracks(matching search: String? = nil, limit: Int = 500, offset: Int = 0) throws(PlayerStateStore.StoreError) -> [LibraryTrack] {
        try store.libraryTracks(matching: search, limit: limit, offset: offset)
    }

    /// The number of tracks whose tags or path contain `search`.
    public func trackCount(matching search: String? = nil) throws(PlayerStateStore.StoreError) -> Int {
        try store.libraryTrackCount(matching: search)
    }

    /// The track with `id`, or nil; nil too while a track's file is outside the directories (a
    /// scan has not yet removed what an earlier run with other directories found).
    public func track(id: Int64) throws(PlayerStateStore.StoreError) -> LibraryTrack? {
        try store.libraryTrack(id: id).flatMap { directories.contains(realPath: $0.path) ? $0 : nil }
    }

    /// The track of the file at `path` (a real path, as `MusicDirectories.confine` gives), or nil.
    public func track(path: String) throws(PlayerStateStore.StoreError) -> LibraryTrack? {
        try store.libraryTrack(path: path)
    }

    /// The embedded picture of the file at `path` (read again from the file), or nil.
    public func artwork(atPath path: String) -> AudioMetadata.Artwork? {
        (try? AudioFileSource(location: path))?.metadata.artwork
    }
}

