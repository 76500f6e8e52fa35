import Foundation
import LongformCore
import LongformSources

/// What a `SampleBufferPlayer` reports, in the order it happens.
public enum PlayerEvent: Sendable, Equatable {
    /// The item heard now changed (nil index: stopped, or the playlist played to its end).
    case currentItemChanged(index: Int?, id: UUID?)
    /// How far into the current item the playhead is; every 0.1 s while playing, and after a jump.
    case offsetChanged(MediaTime)
    /// The rate changed: 0 paused or stopped, 1 playing.
    case rateChanged(Double)
    /// An item could not be played and was skipped; the playlist goes on with the next.
    case itemFailed(index: Int, id: UUID, error: SourceError)
    /// Items were added, removed, moved or replaced, or opening an item changed its entry (its
    /// tags became known, an earlier failure was cleared).
    case playlistChanged
    /// Playback started, paused or stopped.
    case stateChanged(PlaybackState)
}

/// Whether a player is stopped, playing or paused.
public enum PlaybackState: String, Sendable, Equatable {
    /// No current item.
    case stopped
    /// The current item plays.
    case playing
    /// The current item is held at its offset.
    case paused
}

/// Why a playlist edit or transport command was refused; nothing changed.
public enum PlayerError: Error, Equatable, CustomStringConvertible {
    /// An index outside the playlist.
    case indexOutOfRange(index: Int, count: Int)
    /// A command that needs a current item, given while stopped.
    case notPlaying(command: String)

    /// `"index 7 is outside the playlist (3 items)"`.
    public var description: String {
        switch self {
        case .indexOutOfRange(let index, let count): "index \(index) is outside the playlist (\(count) item\(count == 1 ? "" : "s"))"
        case .notPlaying(let command): "\(command) needs a current item, and the player is stopped"
        }
    }
}
