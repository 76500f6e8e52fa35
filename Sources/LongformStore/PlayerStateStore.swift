import Foundation
import GRDB
import LongformCore
import LongformPlayer

/// The playlist, the current item and its offset, the volume and the route (`PlayerSettings`) and
/// the music library (`LibraryTrack`), kept in one SQLite database (through GRDB) so that a player
/// started again resumes where it was. Every save is one transaction: a crash leaves the
/// previous state or the new one, never half of each. A database that cannot be opened or read is
/// reported with its path and SQLite's reason, and is never replaced.
public final class PlayerStateStore: Sendable {
    /// What is saved.
    public struct State: Sendable, Equatable {
        /// The playlist, in order, with stable ids.
        public var entries: [SampleBufferPlayer.Entry]
        /// The position of the current item; nil when stopped.
        public var currentIndex: Int?
        /// How far into the current item the playhead was.
        public var offset: MediaTime
        /// Whether it was playing or paused.
        public var playbackState: PlaybackState

        /// A state to save.
        public init(entries: [SampleBufferPlayer.Entry], currentIndex: Int?, offset: MediaTime, playbackState: PlaybackState) {
            self.entries = entries
            self.currentIndex = currentIndex
            self.offset = offset
            self.playbackState = playbackState
        }
    }

    /// Why the store could not be used; names the database file.
    public struct StoreError: Error, CustomStringConvertible, Sendable {
        /// The database file.
        public var path: String
        /// SQLite's or the file system's words.
        public var reason: String

        /// `"/home/u/.local/state/longform/player.sqlite: file is not a database"`.
        public var description: String { "\(path): \(reason)" }
    }

    /// The database file.
    public let path: String
    let database: DatabaseQueue

    /// The database file inside `directory`.
    public static func databasePath(inDirectory directory: String) -> String {
        (directory as NSString).appendingPathComponent("player.sqlite")
    }

    /// The state directory: `$XDG_STATE_HOME/longform`, or `~/.local/state/longform`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        StateDirectory.defaultPath(environment: environment)
    }

    /// Opens (or creates) the database in `directory`, creating the directory if needed.
    public init(directory: String) throws(StoreError) {
        path = Self.databasePath(inDirectory: directory)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError(path: path, reason: "cannot create the state directory (\(error.localizedDescription))")
        }
        do {
            // Write-ahead log, synced at checkpoints: a save is one append and no fsync (the
            // position is saved every second while playing), and still all or nothing after a crash.
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
            database = try DatabaseQueue(path: path, configuration: configuration)
            try Self.migrator.migrate(database)
        } catch {
            throw StoreError(path: path, reason: Self.reason(error))
        }
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "playlistItem") { table in
                table.column("position", .integer).primaryKey()
                table.column("id", .text).notNull()
                table.column("location", .text).notNull()
                table.column("title", .text)
                table.column("artist", .text)
                table.column("album", .text)
                table.column("durationSeconds", .double)
            }
            try db.create(table: "playerState") { table in
                table.column("id", .integer).primaryKey().check { $0 == 1 }
                table.column("currentIndex", .integer)
                table.column("offsetSeconds", .double).notNull()
                table.column("playbackState", .text).notNull()
            }
        }
        migrator.registerMigration("v2") { db in
            try db.create(table: "setting") { table in
                table.column("name", .text).primaryKey()
                table.column("value", .text).notNull()
            }
            try db.create(table: "libraryTrack") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("path", .text).notNull().unique()
                table.column("title", .text)
                table.column("artist", .text)
                table.column("album", .text)
                table.column("durationSeconds", .double)
                table.column("hasArtwork", .boolean).notNull()
                table.column("modificationTime", .double).notNull()
                table.column("size", .integer).notNull()
            }
        }
        return migrator
    }

    /// Replaces the saved state with `state`, in one transaction.
    public func save(_ state: State) throws(StoreError) {
        try write { db in
            try Self.writePlaylist(state.entries, in: db)
            try Self.writePosition(of: state, in: db)
        }
    }

    /// Saves only the current index, offset and transport state (cheap: one row), keeping the
    /// saved playlist; for the once-a-second save while playing.
    public func savePosition(of state: State) throws(StoreError) {
        try write { db in try Self.writePosition(of: state, in: db) }
    }

    func write(_ body: (Database) throws -> Void) throws(StoreError) {
        do {
            try database.write { db in try body(db) }
        } catch {
            throw StoreError(path: path, reason: Self.reason(error))
        }
    }

    private static func writePlaylist(_ entries: [SampleBufferPlayer.Entry], in db: Database) throws {
        try db.execute(sql: "DELETE FROM playlistItem")
        let insert = try db.makeStatement(sql: "INSERT INTO playlistItem (position, id, location, title, artist, album, durationSeconds) VALUES (?, ?, ?, ?, ?, ?, ?)")
        for (position, entry) in entries.enumerated() {
            let item = entry.item
            try insert.execute(arguments: [position, entry.id.uuidString, item.location, item.title, item.artist, item.album, item.duration?.seconds])
        }
    }

    private static func writePosition(of state: State, in db: Database) throws {
        // Cached: this runs every second while playing, and parsing the SQL each time was most of its cost.
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO playerState (id, currentIndex, offsetSeconds, playbackState) VALUES (1, ?, ?, ?)")
            .execute(arguments: [state.currentIndex, state.offset.isNumeric ? state.offset.seconds : 0, state.playbackState.rawValue])
    }

    /// The saved state, or nil if nothing was saved yet.
    public func load() throws(StoreError) -> State? {
        do {
            return try database.read { db -> State? in
                guard let row = try Row.fetchOne(db, sql: "SELECT currentIndex, offsetSeconds, playbackState FROM playerState WHERE id = 1") else { return nil }
                let entries = try Row.fetchAll(db, sql: "SELECT id, location, title, artist, album, durationSeconds FROM playlistItem ORDER BY position").map { row in
                    let duration: Double? = row["durationSeconds"]
                    let item = PlaylistItem(location: row["location"], title: row["title"], artist: row["artist"], album: row["album"],
                                            duration: duration.map { MediaTime(seconds: $0, preferredTimescale: 1_000_000) })
                    let id: String = row["id"]
                    return SampleBufferPlayer.Entry(id: UUID(uuidString: id) ?? UUID(), item: item, failure: nil)
                }
                var index: Int? = row["currentIndex"]
                if let current = index, !entries.indices.contains(current) { index = nil }
                let seconds: Double = row["offsetSeconds"]
                let stateName: String = row["playbackState"]
                return State(entries: entries, currentIndex: index, offset: MediaTime(seconds: max(seconds, 0), preferredTimescale: 1_000_000),
                             playbackState: PlaybackState(rawValue: stateName) ?? .stopped)
            }
        } catch {
            throw StoreError(path: path, reason: Self.reason(error))
        }
    }

    /// Runs `body` in a read transaction; errors name the database.
    func read<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try database.read { db in try body(db) }
        } catch {
            throw StoreError(path: path, reason: Self.reason(error))
        }
    }

    static func reason(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? error.description }
        return "\(error)"
    }
}
