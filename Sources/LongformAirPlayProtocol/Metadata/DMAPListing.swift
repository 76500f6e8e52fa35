/// The now-playing metadata RAOP sends (`SET_PARAMETER`, `application/x-dmap-tagged`): a DMAP
/// `mlit` item holding the title (`minm`), artist (`asar`) and album (`asal`). Each DMAP field is
/// a 4-letter code, a 4-byte big-endian length and the value.
public enum DMAPListing {
    /// The `mlit` item for `title`, `artist` and `album` (empty strings are left out).
    public static func item(title: String, artist: String, album: String) -> [UInt8] {
        var inner: [UInt8] = []
        for (code, value) in [("minm", title), ("asar", artist), ("asal", album)] where !value.isEmpty {
            inner += field(code, Array(value.utf8))
        }
        return field("mlit", inner)
    }

    /// One field: `code`, the length of `value`, `value`.
    static func field(_ code: String, _ value: [UInt8]) -> [UInt8] {
        var bytes = Array(code.utf8.prefix(4))
        bytes.appendBigEndian(UInt32(value.count))
        return bytes + value
    }
}
