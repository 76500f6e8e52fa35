import Foundation

// The JSON bodies the HTTP API takes (docs in LongformServer's Resources/openapi.yaml), and their
// decoding from bytes: a module of their own, without the server, so that a fuzz target reads
// them as the server does. Times are seconds (Double).

/// One item to add: exactly one of a file path (inside a music directory), an http(s) URL or a
/// library track id.
public struct NewItemRequest: Codable, Sendable, Equatable {
    /// A file inside a music directory.
    public var path: String?
    /// An http(s) URL.
    public var url: String?
    /// A library track's id.
    public var libraryId: Int64?
}

/// `POST /api/playlist/items`.
public struct AddItemsRequest: Codable, Sendable, Equatable {
    /// The items, in order.
    public var items: [NewItemRequest]
    /// Where to insert; the end when absent.
    public var index: Int?
}

/// `POST /api/playlist/items/{id}/move`.
public struct MoveRequest: Codable, Sendable, Equatable {
    /// The index the item moves to.
    public var index: Int
}

/// `POST /api/transport/seek`: within the current item, or into the item `id`.
public struct SeekRequest: Codable, Sendable, Equatable {
    /// Seconds into the item.
    public var offset: Double
    /// The item; the current one when absent.
    public var id: UUID?
}

/// `POST /api/transport/play`: resume, or play the item `id` from its start.
public struct PlayRequest: Codable, Sendable, Equatable {
    /// The item to play from its start; resume when absent.
    public var id: UUID?
}

/// `PUT /api/speakers/{index}/volume`.
public struct SpeakerVolumeRequest: Codable, Sendable, Equatable {
    /// The speaker's own volume (0...1, checked by the server).
    public var volume: Float

    /// Decodes the volume as any JSON number, refusing null.
    public init(from decoder: any Decoder) throws {
        // As a Double: 1e-50 is a tiny volume, not an error (Foundation cannot make a Float of
        // it); the range is checked by the caller.
        volume = Float(try decoder.container(keyedBy: CodingKeys.self).decodeNonNull(Double.self, forKey: .volume))
    }
}

/// `PUT /api/volume`: either or both; a key that is there must not be null.
public struct VolumeRequest: Codable, Sendable, Equatable {
    /// The group's volume (0...1, checked by the server).
    public var volume: Float?
    /// Whether the output is muted.
    public var isMuted: Bool?

    /// Decodes either key as present or absent, refusing null.
    public init(from decoder: any Decoder) throws {
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
public struct RouteRequest: Codable, Sendable, Equatable {
    /// The route's specifier (`null`, `pulse:SINK`, `speaker:HOST:PORT`, …).
    public var route: String
}
