import Foundation
import LongformCore
import LongformRendering
import LongformSources

/// One playlist entry as the serializer plays it: a unique id (so that the same URL twice is two
/// items), the part of the item to play, how far it has been enqueued, and a source that is opened
/// when the first buffer is asked for, or ahead of it (see `prepareSource()`), and released once
/// the item is fully enqueued or taken off the timeline (unless a restart keeps it, or it was
/// opened ahead and is still unread, see `flushSource(keepingSource:)`). A URL is read by a
/// `ReadAheadSource` on a thread of its own: the player's queue never waits on the network.
/// Used only on the player's queue.
final class SampleBufferItem: @unchecked Sendable {
    /// What the next read of the item found.
    enum Read {
        /// The next buffer, with item-relative times.
        case buffer(SampleBuffer)
        /// A URL whose next audio is not decoded yet: ask again later.
        case pending
        /// The item's end (or everything from its start offset is enqueued).
        case end
    }

    /// New for every entry, also for the same URL twice.
    let uniqueID: UUID
    /// What the user put in the playlist, completed from the file's tags once opened.
    private(set) var playlistItem: PlaylistItem
    /// Why the item could not be played, if it failed the last time it was opened.
    private(set) var failure: SourceError?
    /// Item time of the first frame to play. Setting it starts enqueueing over from there.
    var startOffset: MediaTime = .zero {
        didSet { endOffset = startOffset }
    }
    /// Item time just past the last frame enqueued.
    private(set) var endOffset: MediaTime = .zero
    /// Whether a buffer has been asked for since the item was placed.
    private(set) var isEnqueued = false
    /// Whether everything from `startOffset` to the end has been enqueued (or the item failed).
    private(set) var isFullyEnqueued = false
    /// The timeline time of the item's zero while it is placed on the timeline.
    var timelineBase: MediaTime?
    /// The observer at the item's end on the timeline.
    var boundaryObserver: RenderSynchronizer.TimeObserverToken?
    private var source: AudioFileSource? {
        didSet { isSourcePrepared = false }
    }
    /// Whether `source` must seek to `startOffset` before it is read: it was kept open across a
    /// flush, or opened ahead (at the start) for an item that starts elsewhere. A source opened
    /// ahead needs no seek when `startOffset` is the start.
    private var isSourceMisplaced = false
    /// Whether `source` was opened ahead and stands unread at the item's start.
    private var isSourcePrepared = false
    /// Whether opening ahead failed: it is not tried again until an open succeeds (the first
    /// buffer reports why).
    private var hasFailedToPrepare = false
    /// The cover art found when the source was last opened, until the player takes it to show.
    private var artwork: AudioMetadata.Artwork?
    /// A URL's reader, started at `readAhead.startOffset`.
    private var readAhead: ReadAheadSource?
    /// Whether a buffer was taken from `readAhead` (it no longer stands at its start offset).
    private var isReadAheadConsumed = false
    /// Whether the item is a URL, read ahead rather than opened on the player's queue.
    var isNetwork: Bool { AudioFileSource.isNetworkLocation(playlistItem.location) }

    /// An entry for `playlistItem`: new, or with the id it was saved with.
    init(_ playlistItem: PlaylistItem, uniqueID: UUID = UUID()) {
        self.uniqueID = uniqueID
        self.playlistItem = playlistItem
    }

    /// Fills in what the file's tags say and the entry does not know yet.
    func adopt(_ metadata: AudioMetadata) { playlistItem.adopt(metadata) }

    /// Timeline time of the first frame to play, once placed.
    var timelineStart: MediaTime? { timelineBase.map { $0 + startOffset } }
    /// Timeline time just past what is enqueued, once placed.
    var timelineEnd: MediaTime? { timelineBase.map { $0 + endOffset } }

    /// The next buffer of the item (about `maximumDuration` at most, when given), with
    /// item-relative times, or nil at its end. Opens the source on the first call unless it is
    /// open (calling `entryChanged` when that changed the entry: tags not known before, an
    /// earlier failure cleared) and seeks to `startOffset`.
    /// A failure ends the item: it is recorded, thrown once, and the item yields nothing more.
    func nextSampleBuffer(maximumDuration: Double? = nil, entryChanged: () -> Void) throws(SourceError) -> Read {
        guard !isFullyEnqueued else { return .end }
        isEnqueued = true
        if isNetwork { return try nextNetworkBuffer(entryChanged: entryChanged) }
        do throws(SourceError) {
            if let kept = source, isSourceMisplaced {
                isSourceMisplaced = false
                // A source that cannot seek now (a connection that dropped meanwhile) is opened
                // afresh. A prepared one at the start needs no seek (which would reopen the file).
                if !(isSourcePrepared && startOffset == .zero) {
                    do throws(SourceError) { try kept.seek(to: startOffset) } catch { source = nil }
                }
            }
            if source == nil {
                let (opening, isEntryChanged) = try openSource()
                source = opening
                if isEntryChanged { entryChanged() }
                if startOffset > .zero { try opening.seek(to: startOffset) }
            }
            isSourcePrepared = false
            guard let buffer = try source?.nextSampleBuffer(maximumDuration: maximumDuration) else {
                finishEnqueueing()
                return .end
            }
            endOffset = buffer.presentationTime + buffer.trimDurationAtStart + buffer.outputDuration
            return .buffer(buffer)
        } catch {
            failure = error
            finishEnqueueing()
            throw error
        }
    }

    /// The next buffer of a URL from its reader, started here at `startOffset` unless one
    /// stands there unread; `pending` while the network has not delivered it.
    private func nextNetworkBuffer(entryChanged: () -> Void) throws(SourceError) -> Read {
        let reader = readerAtStartOffset()
        if let metadata = reader.takeMetadata(), adoptOpened(metadata) { entryChanged() }
        do throws(SourceError) {
            switch try reader.read() {
            case .pending:
                return .pending
            case .end:
                finishEnqueueing()
                return .end
            case .buffer(let buffer):
                isReadAheadConsumed = true
                endOffset = buffer.presentationTime + buffer.trimDurationAtStart + buffer.outputDuration
                return .buffer(buffer)
            }
        } catch {
            failure = error
            finishEnqueueing()
            throw error
        }
    }

    /// Opens the item's file or URL and takes in what its headers say; also returns whether that
    /// changed the entry (tags not known before, an earlier failure cleared).
    private func openSource() throws(SourceError) -> (source: AudioFileSource, isEntryChanged: Bool) {
        let opening = try AudioFileSource(location: playlistItem.location)
        hasFailedToPrepare = false
        return (opening, adoptOpened(opening.metadata))
    }

    /// Takes in what an opened source's headers say (tags, cover art) and clears an earlier
    /// failure; returns whether that changed the entry.
    private func adoptOpened(_ metadata: AudioMetadata) -> Bool {
        let known = playlistItem
        playlistItem.adopt(metadata)
        artwork = metadata.artwork
        defer { failure = nil }
        return playlistItem != known || failure != nil
    }

    /// The URL's reader for this placement: the one reading on (it has delivered audio), or one
    /// standing unread at `startOffset` (opened ahead); otherwise a new one started there.
    private func readerAtStartOffset() -> ReadAheadSource {
        if let current = readAhead, isReadAheadConsumed || current.startOffset == startOffset { return current }
        let reader = ReadAheadSource(location: playlistItem.location, startingAt: startOffset)
        readAhead = reader
        isReadAheadConsumed = false
        return reader
    }

    /// The cover art read when the item was opened, handed over once: an item keeps no picture
    /// after it has been shown.
    func takeArtwork() -> AudioMetadata.Artwork? {
        defer { artwork = nil }
        return artwork
    }

    /// Marks the item complete and releases its source.
    func finishEnqueueing() {
        isFullyEnqueued = true
        source = nil
        readAhead = nil
        isReadAheadConsumed = false
    }

    /// Opens the source ahead of the first buffer, at the item's start, so that the command that
    /// plays the item (next, removing the current item, play from stopped) does not wait for the
    /// file: opening it and reading its headers took most of a millisecond. A URL instead starts
    /// its reader (`ReadAheadSource`), so that a stall is found while the item before it still
    /// plays. Does nothing while the
    /// item is being enqueued or has a source open that was not opened ahead; a failure is left
    /// for the first buffer to find and report, and opening ahead is not tried again until an
    /// open succeeds. Returns whether the source is prepared,
    /// and whether opening it changed the entry (as in `nextSampleBuffer(maximumDuration:entryChanged:)`).
    func prepareSource() -> (isPrepared: Bool, isEntryChanged: Bool) {
        if isNetwork {
            guard !isEnqueued else { return (false, false) }
            _ = readerAtStartOffset()
            return (true, false)
        }
        if isSourcePrepared { return (true, false) }
        guard !isEnqueued, source == nil, !hasFailedToPrepare else { return (false, false) }
        do throws(SourceError) {
            let (opening, isEntryChanged) = try openSource()
            source = opening
            isSourcePrepared = true
            isSourceMisplaced = startOffset != .zero
            return (true, isEntryChanged)
        } catch {
            hasFailedToPrepare = true
            return (false, false)
        }
    }

    /// Closes a source `prepareSource()` opened, if it is still unread, and forgets its cover art
    /// (read again if the item is opened to play).
    func releasePreparedSource() {
        if isNetwork, !isEnqueued {
            readAhead = nil
            return
        }
        guard isSourcePrepared else { return }
        source = nil
        artwork = nil
    }

    /// Takes the item off the timeline: it will be enqueued again from its start offset. With
    /// `keepingSource`, an open source stays open and seeks there instead of opening again (a
    /// seek within the item playing is heard sooner: opening a file and reading its headers took
    /// most of a millisecond). A source opened ahead and still unread always stays: it stands at
    /// the start, and the serializer closes it when the item stops being the one to open ahead.
    func flushSource(keepingSource: Bool = false) {
        if !keepingSource && !isSourcePrepared { source = nil }
        // Only a reader opened ahead and never asked stays (the serializer closes it when the item
        // stops being the one to open ahead): one that was asked for audio stands past the start
        // offset or has failed, and an item taken off the timeline must not download on.
        if isEnqueued || isReadAheadConsumed {
            readAhead = nil
            isReadAheadConsumed = false
        }
        isSourceMisplaced = source != nil
        isEnqueued = false
        isFullyEnqueued = false
        timelineBase = nil
        endOffset = startOffset
    }
}
