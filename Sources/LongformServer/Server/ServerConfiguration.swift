import LongformRouteCatalog

/// What `longform serve` is started with.
public struct ServerConfiguration: Sendable {
    /// The address to listen on: `127.0.0.1`, `::1`, `0.0.0.0`, a host name.
    public var host: String
    /// The TCP port; 0 picks a free one (reported to `run`'s `onRunning`).
    public var port: Int
    /// The token every request must carry; nil serves without one (loopback only).
    public var token: String?
    /// Where the SQLite database lives.
    public var stateDirectory: String
    /// The route to play to; nil: the saved one, else the machine's default.
    public var route: RouteSpecifier?
    /// The directories whose files may be played and make up the library.
    public var musicDirectories: [String]
    /// Whether changes under the music directories start a rescan (inotify); without, only
    /// `POST /api/library/rescan` does (network file systems send no notifications).
    public var isWatchingMusicDirectories: Bool
    /// The sample rate routes are opened at.
    public var sampleRate: Int

    /// A configuration.
    public init(host: String = "127.0.0.1", port: Int = 8080, token: String? = nil, stateDirectory: String, route: RouteSpecifier? = nil,
                musicDirectories: [String] = [], isWatchingMusicDirectories: Bool = true, sampleRate: Int = 44_100) {
        self.host = host
        self.port = port
        self.token = token
        self.stateDirectory = stateDirectory
        self.route = route
        self.musicDirectories = musicDirectories
        self.isWatchingMusicDirectories = isWatchingMusicDirectories
        self.sampleRate = sampleRate
    }

    /// Whether `host` reaches this machine only (127.0.0.0/8, ::1, localhost): the only addresses
    /// served without a token.
    public var isLoopback: Bool { Self.isLoopback(host) }

    /// Whether `name` is `localhost`, `::1` or a dotted IPv4 address in 127.0.0.0/8 (four numbers:
    /// `127.evil.example` is a host name, not loopback).
    static func isLoopback(_ name: String) -> Bool {
        let name = name.lowercased()
        if name == "localhost" || name == "::1" || name == "[::1]" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in part.count <= 3 && UInt8(part) != nil }
    }
}
