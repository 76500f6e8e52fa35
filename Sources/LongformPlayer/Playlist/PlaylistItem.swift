import Foundation
import LongformCore
import LongformSources

/// One entry a user puts in a playlist: where the audio is, and what is known about it. Title,
/// artist, album and duration are filled in from the file's tags when the player first opens it.
public struct PlaylistItem: Sendable, Equatable, Hashable {
    /// A path or an http(s) URL.
    public var location: String
    /// The track title, when known.
    public var title: String?
    /// The artist, when known.
    public var artist: String?
    /// The album, when known.
    public var album: String?
    /// The length after gapless trimming, when known.
    public var duration: MediaTime?

    /// An item for `location`, with whatever is already known about it.
    public init(location: String, title: String? = nil, artist: String? = nil, album: String? = nil, duration: MediaTime? = nil) {
        self.location = location
        self.title = title
        self.artist = artist
        self.album = album
        self.duration = duration
    }

    /// The title, or the file name when the item has no title tag.
    public var displayTitle: String {
        if let title, !title.isEmpty { return title }
        let name = (location as NSString).lastPathComponent
        return name.isEmpty ? location : name
    }

    /// Fills in what the file says and the item does not know yet.
    mutating func adopt(_ metadata: AudioMetadata) {
        title = title ?? metadata.title
        artist = artist ?? metadata.artist
        album = album ?? metadata.album
        if duration == nil, metadata.duration.isNumeric { duration = metadata.duration }
    }
}
