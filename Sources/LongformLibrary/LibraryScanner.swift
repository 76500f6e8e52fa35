import Foundation
import Logging
import LongformCore
import LongformSources
import LongformStore

/// Walks the music directories and brings the store's library up to date: files that are new or
/// changed (by modification time or size) are opened to read their tags, files that are gone are
/// removed. A file that cannot be read is logged by name and left out.
struct LibraryScanner {
    /// The file extensions scanned (lowercased).
    static let audioExtensions: Set<String> = ["wav", "aif", "aiff", "flac", "mp3", "m4a", "m4b", "mp4", "aac", "ogg", "oga", "opus", "wv", "ape"]

    let directories: MusicDirectories
    let store: PlayerStateStore
    private let logger = Logger(label: LogLabel.library)

    init(directories: MusicDirectories, store: PlayerStateStore) {
        self.directories = directories
        self.store = store
    }

    func scan() throws(PlayerStateStore.StoreError) -> MusicLibrary.ScanSummary {
        let known = try store.libraryFingerprints()
        var summary = MusicLibrary.ScanSummary(added: 0, updated: 0, removed: 0, unreadable: 0)
        var seen = Set<String>()
        var changed: [LibraryTrack] = []
        for file in audioFiles() {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: file) else { continue }
            let modificationTime = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
            if let old = known[file], old.modificationTime == modificationTime, old.size == size {
                seen.insert(file)
                continue
            }
            do {
                let metadata = try AudioFileSource(location: file).metadata
                changed.append(LibraryTrack(path: file, title: metadata.title, artist: metadata.artist, album: metadata.album,
                                            durationSeconds: metadata.duration.isNumeric ? metadata.duration.seconds : nil,
                                            hasArtwork: metadata.artwork != nil, modificationTime: modificationTime, size: size))
                seen.insert(file)
                if known[file] == nil { summary.added += 1 } else { summary.updated += 1 }
            } catch {
                logger.warning("library: \(error)")
                summary.unreadable += 1
            }
        }
        let removed = known.keys.filter { !seen.contains($0) }
        summary.removed = removed.count
        try store.updateLibrary(changed: changed, removedPaths: removed)
        return summary
    }

    /// The real paths of the audio files under the directories, each once; symlinks that lead out
    /// of the directories are skipped.
    private func audioFiles() -> [String] {
        var files: [String] = []
        var seen = Set<String>()
        for directory in directories.paths {
            guard let enumerator = FileManager.default.enumerator(atPath: directory) else { continue }
            while let relative = enumerator.nextObject() as? String {
                let name = (relative as NSString).lastPathComponent
                if name.hasPrefix(".") { continue }
                guard Self.audioExtensions.contains((name as NSString).pathExtension.lowercased()) else { continue }
                let full = (directory as NSString).appendingPathComponent(relative)
                guard let real = MusicDirectories.realPath(full), directories.contains(realPath: real), seen.insert(real).inserted else { continue }
                files.append(real)
            }
        }
        return files.sorted()
    }
}
