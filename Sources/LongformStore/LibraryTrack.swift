import GRDB

/// One audio file of the music library, as its last scan found it.
public struct LibraryTrack: Sendable, Equatable, Codable {
    /// Stable while the file stays at its path.
    public var id: Int64
    /// The file's absolute path, inside a music directory.
    public var path: String
    /// The title tag, if any.
    public var title: String?
    /// The artist tag, if any.
    public var artist: String?
    /// The album tag, if any.
    public var album: String?
    /// The length in seconds, when known.
    public var durationSeconds: Double?
    /// Whether the file embeds a picture.
    public var hasArtwork: Bool
    /// The file's modification time (seconds since 1970) when it was read; a change means a new read.
    public var modificationTime: Double
    /// The file's size in bytes when it was read.
    public var size: Int64

    /// A track; `id` is assigned by the store (pass 0 for a new one).
    public init(id: Int64 = 0, path: String, title: String? = nil, artist: String? = nil, album: String? = nil, durationSeconds: Double? = nil,
                hasArtwork: Bool = false, modificationTime: Double, size: Int64) {
        self.id = id
        self.path = path
        self.title = title
        self.artist = artist
        self.album = album
        self.durationSeconds = durationSeconds
        self.hasArtwork = hasArtwork
        self.modificationTime = modificationTime
        self.size = size
    }

    init(row: Row) {
        self.init(id: row["id"], path: row["path"], title: row["title"], artist: row["artist"], album: row["album"],
                  durationSeconds: row["durationSeconds"], hasArtwork: row["hasArtwork"], modificationTime: row["modificationTime"], size: row["size"])
    }
}

extension PlayerStateStore {
    /// The library's tracks whose title, artist, album or path contains `search` (all without
    /// one), ordered by artist, album and path; `limit` of them from `offset`.
    public func libraryTracks(matching search: String? = nil, limit: Int = 500, offset: Int = 0) throws(StoreError) -> [LibraryTrack] {
        let filter = Self.searchFilter(search)
        return try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM libraryTrack\(filter.sql) ORDER BY artist IS NULL, artist, album, path LIMIT ? OFFSET ?",
                             arguments: filter.arguments + [max(limit, 0), max(offset, 0)]).map(LibraryTrack.init(row:))
        }
    }

    /// The number of tracks whose title, artist, album or path contains `search` (all without one).
    public func libraryTrackCount(matching search: String? = nil) throws(StoreError) -> Int {
        let filter = Self.searchFilter(search)
        return try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM libraryTrack\(filter.sql)", arguments: filter.arguments) ?? 0 }
    }

    private static func searchFilter(_ search: String?) -> (sql: String, arguments: StatementArguments) {
        guard let search, !search.isEmpty else { return ("", []) }
        // LIKE's own wildcards in the search are taken literally.
        let pattern = "%" + search.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
        return (" WHERE title LIKE ? ESCAPE '\\' OR artist LIKE ? ESCAPE '\\' OR album LIKE ? ESCAPE '\\' OR path LIKE ? ESCAPE '\\'",
                [pattern, pattern, pattern, pattern])
    }

    /// The track with `id`, or nil.
    public func libraryTrack(id: Int64) throws(StoreError) -> LibraryTrack? {
        try read { db in try Row.fetchOne(db, sql: "SELECT * FROM libraryTrack WHERE id = ?", arguments: [id]).map(LibraryTrack.init(row:)) }
    }

    /// The track of the file at `path` (a real path), or nil.
    public func libraryTrack(path: String) throws(StoreError) -> LibraryTrack? {
        try read { db in try Row.fetchOne(db, sql: "SELECT * FROM libraryTrack WHERE path = ?", arguments: [path]).map(LibraryTrack.init(row:)) }
    }

    /// Every track's path with the modification time and size it was read at, for a rescan to
    /// tell what changed.
    public func libraryFingerprints() throws(StoreError) -> [String: (modificationTime: Double, size: Int64)] {
        try read { db in
            var fingerprints: [String: (modificationTime: Double, size: Int64)] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT path, modificationTime, size FROM libraryTrack") {
                fingerprints[row["path"]] = (row["modificationTime"], row["size"])
            }
            return fingerprints
        }
    }

    /// One scan's result, in one transaction: `changed` tracks are inserted or updated by path
    /// (keeping the id of a path already known), and the tracks at `removedPaths` are deleted.
    public func updateLibrary(changed: [LibraryTrack], removedPaths: [String]) throws(StoreError) {
        try write { db in
            let upsert = try db.makeStatement(sql: """
                INSERT INTO libraryTrack (path, title, artist, album, durationSeconds, hasArtwork, modificationTime, size)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(path) DO UPDATE SET title = excluded.title, artist = excluded.artist, album = excluded.album,
                    durationSeconds = excluded.durationSeconds, hasArtwork = excluded.hasArtwork,
                    modificationTime = excluded.modificationTime, size = excluded.size
                """)
            for track in changed {
                try upsert.execute(arguments: [track.path, track.title, track.artist, track.album, track.durationSeconds, track.hasArtwork,
                                               track.modificationTime, track.size])
            }
            let delete = try db.makeStatement(sql: "DELETE FROM libraryTrack WHERE path = ?")
            for path in removedPaths { try delete.execute(arguments: [path]) }
        }
    }
}
