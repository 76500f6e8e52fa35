import GRDB

/// What a player keeps besides its playlist: the volume, mute, the route it plays to, and the
/// network speakers' own volumes.
public struct PlayerSettings: Sendable, Equatable {
    /// Linear gain, 0 to 1.
    public var volume: Float
    /// Whether the output is muted (the volume is kept).
    public var isMuted: Bool
    /// The route's specifier (`pulse`, `null`, …); nil for the default.
    public var route: String?
    /// Network speakers' own volumes (0 to 1) by `HOST:PORT`; full volume for one not named.
    public var speakerVolumes: [String: Float]

    /// Settings; the defaults are full volume, not muted, the default route.
    public init(volume: Float = 1, isMuted: Bool = false, route: String? = nil, speakerVolumes: [String: Float] = [:]) {
        self.volume = volume
        self.isMuted = isMuted
        self.route = route
        self.speakerVolumes = speakerVolumes
    }

    /// Whether `volume` is one a player takes: a number from 0 to 1.
    public static func isValidVolume(_ volume: Float) -> Bool { volume.isFinite && (0...1).contains(volume) }

    /// The prefix of a speaker volume's setting name; the speaker's address follows it.
    static let speakerVolumePrefix = "speaker-volume:"
}

extension PlayerStateStore {
    /// Replaces the saved settings, in one transaction.
    public func saveSettings(_ settings: PlayerSettings) throws(StoreError) {
        try write { db in
            let upsert = try db.makeStatement(sql: "INSERT OR REPLACE INTO setting (name, value) VALUES (?, ?)")
            try upsert.execute(arguments: ["volume", String(settings.volume)])
            try upsert.execute(arguments: ["muted", settings.isMuted ? "1" : "0"])
            if let route = settings.route {
                try upsert.execute(arguments: ["route", route])
            } else {
                try db.execute(sql: "DELETE FROM setting WHERE name = 'route'")
            }
            // Replaced as a whole, so that the rows are always the dictionary's.
            try db.execute(sql: "DELETE FROM setting WHERE name LIKE ? || '%'", arguments: [PlayerSettings.speakerVolumePrefix])
            for (address, volume) in settings.speakerVolumes {
                try upsert.execute(arguments: [PlayerSettings.speakerVolumePrefix + address, String(volume)])
            }
        }
    }

    /// The saved settings; the defaults for what was never saved.
    public func loadSettings() throws(StoreError) -> PlayerSettings {
        let values = try read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT name, value FROM setting").map { row -> (String, String) in (row["name"], row["value"]) })
        }
        var settings = PlayerSettings()
        // A value another version wrote that does not parse keeps the default.
        if let volume = values["volume"].flatMap(Float.init), volume.isFinite { settings.volume = min(max(volume, 0), 1) }
        settings.isMuted = values["muted"] == "1"
        settings.route = values["route"]
        for (name, value) in values where name.hasPrefix(PlayerSettings.speakerVolumePrefix) {
            if let volume = Float(value), volume.isFinite {
                settings.speakerVolumes[String(name.dropFirst(PlayerSettings.speakerVolumePrefix.count))] = min(max(volume, 0), 1)
            }
        }
        return settings
    }
}
