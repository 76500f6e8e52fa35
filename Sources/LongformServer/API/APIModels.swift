import Foundation
import LongformCore
import LongformLibrary
import LongformPlayer
import LongformStore

// The JSON the API speaks; docs in Resources/openapi.yaml. Times are seconds (Double).

/// One playlist entry.
struct ItemJSON: Codable, Sendable, Equatable {
    var id: UUID
    var location: String
    var title: String?
    var artist: String?
    var album: String?
    var duration: Double?
    /// The title, or the file name when there is no title tag.
    var displayTitle: String
    /// Why the item could not be played, if it failed.
    var failure: String?

    init(_ entry: SampleBufferPlayer.Entry) {
        id = entry.id
        location = entry.item.location
        title = entry.item.title
        artist = entry.item.artist
        album = entry.item.album
        duration = entry.item.duration.flatMap { $0.isNumeric ? $0.seconds : nil }
        displayTitle = entry.item.displayTitle
        failure = entry.failure?.description
    }
}

/// The playlist and which of its items is current.
struct PlaylistJSON: Codable, Sendable, Equatable {
    var items: [ItemJSON]
    var currentIndex: Int?
}

/// Everything a client shows: transport, current item, offset, volume, route and playlist.
struct StateJSON: Codable, Sendable, Equatable {
    var playbackState: String
    var rate: Double
    var currentIndex: Int?
    var currentId: UUID?
    var offset: Double?
    var volume: Float
    var isMuted: Bool
    var route: String
    var playlist: [ItemJSON]
}

/// What plays now, with a link to its artwork.
struct NowPlayingJSON: Codable, Sendable, Equatable {
    var playbackState: String
    var item: ItemJSON?
    var index: Int?
    var offset: Double?
    var hasArtwork: Bool
    var artworkURL: String?
}

/// One route a client may pick.
struct RouteJSON: Codable, Sendable, Equatable {
    /// What `PUT /api/route` takes: `null`, `pulse`, `pulse:SINK`, `alsa:default`.
    var id: String
    var description: String
    var isCurrent: Bool
}

/// The routes, and the current one.
struct RoutesJSON: Codable, Sendable, Equatable {
    var current: String
    var routes: [RouteJSON]
}

/// A library track.
struct TrackJSON: Codable, Sendable, Equatable {
    var id: Int64
    var path: String
    var title: String?
    var artist: String?
    var album: String?
    var duration: Double?
    var hasArtwork: Bool

    init(_ track: LibraryTrack) {
        id = track.id
        path = track.path
        title = track.title
        artist = track.artist
        album = track.album
        duration = track.durationSeconds
        hasArtwork = track.hasArtwork
    }
}

/// A page of library tracks.
struct LibraryPageJSON: Codable, Sendable, Equatable {
    var tracks: [TrackJSON]
    var total: Int
}

/// What a rescan changed.
struct ScanJSON: Codable, Sendable, Equatable {
    var added: Int
    var updated: Int
    var removed: Int
    var unreadable: Int

    init(_ summary: MusicLibrary.ScanSummary) {
        added = summary.added
        updated = summary.updated
        removed = summary.removed
        unreadable = summary.unreadable
    }
}

/// The volume and mute.
struct VolumeJSON: Codable, Sendable, Equatable {
    var volume: Float
    var isMuted: Bool
}

/// A network speaker of the current route, and its own volume (applied on top of the player's).
struct SpeakerJSON: Codable, Sendable, Equatable {
    /// Its position in the route (from 0), as `PUT /api/speakers/{index}/volume` takes it.
    var index: Int
    /// `HOST:PORT`, as the route names it.
    var address: String
    var volume: Float
}

/// The current route's network speakers: none unless it is a `speaker:` route.
struct SpeakersJSON: Codable, Sendable, Equatable {
    var speakers: [SpeakerJSON]
}
