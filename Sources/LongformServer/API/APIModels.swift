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

// MARK: - Requests

/// One item to add: exactly one of a file path (inside a music directory), an http(s) URL or a
/// library track id.
struct NewItemRequest: Codable, Sendable {
    var path: String?
    var url: String?
    var libraryId: Int64?
}

/// `POST /api/playlist/items`.
struct AddItemsRequest: Codable, Sendable {
    var items: [NewItemRequest]
    /// Where to insert; the end when absent.
    var index: Int?
}

/// `POST /api/playlist/items/{id}/move`.
struct MoveRequest: Codable, Sendable {
    var index: Int
}

/// `POST /api/transport/seek`: within the current item, or into the item `id`.
struct SeekRequest: Codable, Sendable {
    var offset: Double
    var id: UUID?
}

/// `POST /api/transport/play`: resume, or play the item `id` from its start.
struct PlayRequest: Codable, Sendable {
    var id: UUID?
}

/// `PUT /api/speakers/{index}/volume`.
struct SpeakerVolumeRequest: Codable, Sendable {
    var volume: Float

    init(from decoder: any Decoder) throws {
        // As a Double: 1e-50 is a tiny volume, not an error (Foundation cannot make a Float of
        // it); the range is checked by the caller.
        volume = Float(try decoder.container(keyedBy: CodingKeys.self).decodeNonNull(Double.self, forKey: .volume))
    }
}

/// `PUT /api/volume`: either or both; a key that is there must not be null.
struct VolumeRequest: Codable, Sendable {
    var volume: Float?
    var isMuted: Bool?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        volume = try container.decodeUnlessAbsent(Double.self, forKey: .volume).map(Float.init)
        isMuted = try container.decodeUnlessAbsent(Bool.self, forKey: .isMuted)
    }
}

extension KeyedDecodingContainer {
    /// The value at `key`; null is refused as "should be …, not null" (Foundation says only
    /// "should be …" for some types).
    func decodeNonNull<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard try !decodeNil(forKey: key) else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [key], debugDescription: "null"))
        }
        return try decode(type, forKey: key)
    }

    /// The value at `key`, nil when the key is absent; null is refused, not taken as absent.
    func decodeUnlessAbsent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        contains(key) ? try decodeNonNull(type, forKey: key) : nil
    }
}

/// `PUT /api/route`.
struct RouteRequest: Codable, Sendable {
    var route: String
}
