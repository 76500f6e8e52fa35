import Foundation

/// One event of the live stream (`GET /api/events`), sent as a Server-Sent Event whose `event:`
/// line is `name` and whose `data:` line is the JSON of `payload`.
struct ServerEvent: Sendable {
    /// `state`, `currentItem`, `offset`, `rate`, `playbackState`, `playlist`, `volume`, `route`, `itemFailed`, `library`.
    var name: String
    /// The JSON text.
    var data: String

    /// An event carrying `payload` as JSON.
    init(name: String, payload: some Encodable) {
        self.name = name
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        data = (try? encoder.encode(payload)).flatMap { String(data: $0, encoding: .utf8) } ?? "null"
    }

    /// The text on the wire.
    var wireText: String { "event: \(name)\ndata: \(data)\n\n" }
}

/// `currentItem`: the item heard now (all nil when stopped).
struct CurrentItemEventJSON: Codable, Sendable {
    var index: Int?
    var id: UUID?
    var item: ItemJSON?
}

/// `offset`: how far into the current item the playhead is.
struct OffsetEventJSON: Codable, Sendable {
    var id: UUID?
    var offset: Double
}

/// `rate`.
struct RateEventJSON: Codable, Sendable {
    var rate: Double
}

/// `playbackState`.
struct PlaybackStateEventJSON: Codable, Sendable {
    var playbackState: String
}

/// `route`.
struct RouteEventJSON: Codable, Sendable {
    var route: String
}

/// `itemFailed`.
struct ItemFailedEventJSON: Codable, Sendable {
    var index: Int
    var id: UUID
    var error: String
}
