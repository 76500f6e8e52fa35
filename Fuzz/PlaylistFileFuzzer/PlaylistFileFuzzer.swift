import Foundation
import FuzzSupport
import LongformPlayer

/// The .m3u reader (`ItemExpansion`) against any playlist files: the input, split at its first
/// zero byte, is written as a.m3u and b.m3u in a folder of their own, and a.m3u is expanded (either
/// may list itself, the other, both, or anything else). Invariants: it ends (loops are found);
/// each item is an absolute path or a URL; it yields no more items than the files' lines allow.
enum PlaylistFileFuzzer {
    /// The folder the two playlists are written to (one per process).
    static let folder: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("longform-fuzz-m3u-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    /// `text` without lines that would reach outside the folder (a path with a slash, a file:
    /// URL, "." or ".."): a playlist may list a folder, and "/" would enumerate the whole disk.
    static func confined(_ bytes: ArraySlice<UInt8>) -> Data {
        let text = String(decoding: bytes, as: UTF8.self)
        let kept = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).filter { line in
            let entry = line.trimmingCharacters(in: .whitespaces).lowercased()
            if entry.hasPrefix("http://") || entry.hasPrefix("https://") { return true }
            return !entry.contains("/") && !entry.hasPrefix(".") && !entry.hasPrefix("\u{FEFF}.")
        }
        return Data(kept.joined(separator: "\n").utf8)
    }

    static func run(_ bytes: [UInt8]) {
        let split = bytes.firstIndex(of: 0) ?? bytes.count
        let first = confined(bytes[..<split]), second = confined(bytes[min(split + 1, bytes.count)...])
        FileManager.default.createFile(atPath: folder + "/a.m3u", contents: first)
        FileManager.default.createFile(atPath: folder + "/b.m3u", contents: second)
        let expansion = ItemExpansion.expand([folder + "/a.m3u"])
        for item in expansion.items {
            FuzzInput.require(item.hasPrefix("/") || item.lowercased().hasPrefix("http://") || item.lowercased().hasPrefix("https://"), "item \(item)")
        }
        // Each line of a.m3u gives at most one item, or b.m3u's (each of its lines one item: a.m3u
        // or b.m3u again would be a loop).
        let lines = { (data: Data) in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).count }
        let bound = max(lines(first), 1) * max(lines(second), 1)
        FuzzInput.require(expansion.items.count <= bound, "\(expansion.items.count) items from \(lines(first)) and \(lines(second)) lines")
    }
}

/// Runs under libFuzzer or replays saved inputs (see `FuzzInput`).
@main struct PlaylistFileFuzzerMain {
    static func main() { FuzzInput.main(PlaylistFileFuzzer.run) }
}
