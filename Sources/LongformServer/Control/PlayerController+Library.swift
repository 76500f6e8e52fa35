import LongformSources
import LongformStore

/// The library endpoints' side of the controller: reads go to the store, a rescan to the library.
extension PlayerController {
    /// Tracks whose tags or path contain `search`.
    func libraryPage(search: String?, limit: Int, offset: Int) throws(APIError) -> LibraryPageJSON {
        do {
            let tracks = try library.tracks(matching: search, limit: limit, offset: offset)
            let total = try library.trackCount(matching: search)
            return LibraryPageJSON(tracks: tracks.map(TrackJSON.init), total: total)
        } catch {
            throw .unavailable("cannot read the library: \(error)")
        }
    }

    /// One track.
    func libraryTrack(id: Int64) throws(APIError) -> TrackJSON {
        TrackJSON(try track(id: id))
    }

    /// A track's embedded picture.
    func libraryArtwork(id: Int64) throws(APIError) -> AudioMetadata.Artwork {
        let track = try track(id: id)
        guard let artwork = library.artwork(atPath: track.path) else { throw .notFound("library track \(id) has no artwork") }
        return artwork
    }

    /// Scans the music directories now.
    func rescanLibrary() throws(APIError) -> ScanJSON {
        do {
            return ScanJSON(try library.rescan())
        } catch {
            throw .unavailable("cannot update the library: \(error)")
        }
    }

    private func track(id: Int64) throws(APIError) -> LibraryTrack {
        let track: LibraryTrack?
        do { track = try library.track(id: id) } catch { throw .unavailable("cannot read the library: \(error)") }
        guard let track else { throw .notFound("no library track has id \(id)") }
        return track
    }
}
