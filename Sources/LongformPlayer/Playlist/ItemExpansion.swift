import Foundation
import LongformSources

/// Turns what the user named into playlist items: files as they are, http(s) URLs as they are,
/// directories into the audio files under them (recursively, in name order), and .m3u/.m3u8
/// playlists into their entries (relative paths taken from the playlist's folder). An argument
/// or entry that cannot be expanded (a playlist that lists itself, directly or through others; an
/// unreadable playlist or directory) is named as a problem and skipped; the others are kept.
public enum ItemExpansion {
    /// Extensions taken from directories; anything else there is skipped.
    public static let audioExtensions: Set<String> = ["wav", "aif", "aiff", "flac", "mp3", "m4a", "mp4", "aac", "alac", "ogg", "oga", "opus"]
    /// Playlists nested deeper than this are skipped (a chain this long is a mistake, not a library).
    public static let maximumNestingDepth = 8
    /// Expansion stops at this many items: playlists that each list another many times would
    /// otherwise multiply to billions without a loop.
    public static let maximumItemCount = 100_000

    /// What the arguments stand for: the items in order, and a sentence for each argument or
    /// entry that was skipped.
    public struct Expansion: Equatable, Sendable {
        /// Files (absolute paths) and URLs, in order.
        public var items: [String] = []
        /// A sentence for each argument or entry skipped, naming it.
        public var problems: [String] = []
    }

    /// The items `arguments` stand for, in order, with what had to be skipped.
    public static func expand(_ arguments: [String]) -> Expansion {
        var expansion = Expansion()
        for argument in arguments { expand(argument, into: &expansion, enclosingPlaylists: []) }
        return expansion
    }

    /// Adds what `argument` stands for; `enclosingPlaylists` are the real paths of the playlists
    /// being read around it, outermost first (a playlist among them would loop).
    private static func expand(_ argument: String, into expansion: inout Expansion, enclosingPlaylists: [String]) {
        guard expansion.items.count < maximumItemCount else {
            let limit = "more than \(maximumItemCount) items; the rest skipped"
            if expansion.problems.last?.hasSuffix(limit) != true { expansion.problems.append("\(argument): \(limit)") }
            return
        }
        if AudioFileSource.isNetworkLocation(argument) { return expansion.items.append(argument) }
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory)
        if exists && isDirectory.boolValue { return directoryItems(argument, into: &expansion) }
        let fileExtension = (argument as NSString).pathExtension.lowercased()
        if exists && (fileExtension == "m3u" || fileExtension == "m3u8") {
            // The real path: a symbolic link or "./" must not hide a loop.
            let realPath = URL(fileURLWithPath: argument).resolvingSymlinksInPath().standardizedFileURL.path
            if enclosingPlaylists.contains(realPath) {
                let chain = (enclosingPlaylists + [realPath]).map { ($0 as NSString).lastPathComponent }.joined(separator: " → ")
                return expansion.problems.append("\(argument): the playlist lists itself (\(chain)); skipped")
            }
            guard enclosingPlaylists.count < maximumNestingDepth else {
                return expansion.problems.append("\(argument): playlists nested more than \(maximumNestingDepth) deep; skipped")
            }
            return playlistItems(argument, into: &expansion, enclosingPlaylists: enclosingPlaylists + [realPath])
        }
        // A missing or unreadable file is kept: the player names it and skips it. Paths are made
        // absolute, so that a saved playlist plays from any directory.
        expansion.items.append(URL(fileURLWithPath: argument).standardizedFileURL.path)
    }

    private static func directoryItems(_ directory: String, into expansion: inout Expansion) {
        guard let enumerator = FileManager.default.enumerator(atPath: directory) else {
            return expansion.problems.append("\(directory): cannot list the directory; skipped")
        }
        var files: [String] = []
        while let relative = enumerator.nextObject() as? String {
            if audioExtensions.contains((relative as NSString).pathExtension.lowercased()) {
                files.append(relative)
            }
        }
        // Name order, folder by folder: "A/2.flac" before "B/1.flac", "track 2" before "track 10".
        files.sort { $0.localizedStandardCompare($1) == .orderedAscending }
        let base = URL(fileURLWithPath: directory).standardizedFileURL.path
        expansion.items += files.map { (base as NSString).appendingPathComponent($0) }
    }

    private static func playlistItems(_ path: String, into expansion: inout Expansion, enclosingPlaylists: [String]) {
        // Through a FileHandle: Foundation's whole-file read (Data(contentsOf:), FileManager's
        // contents(atPath:)) leaks its 4 KB buffer on an empty file.
        let data: Data
        do {
            guard let handle = FileHandle(forReadingAtPath: path) else { throw CocoaError(.fileReadNoPermission) }
            defer { try? handle.close() }
            data = try handle.readToEnd() ?? Data()
        } catch {
            return expansion.problems.append("\(path): cannot read the playlist (\(error.localizedDescription)); skipped")
        }
        let text = String(decoding: data, as: UTF8.self)
        let folder = (path as NSString).deletingLastPathComponent
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\u{FEFF}", with: "")
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            var entry = line
            if entry.hasPrefix("file://") { entry = URL(string: entry)?.path ?? entry }
            if !AudioFileSource.isNetworkLocation(entry) && !entry.hasPrefix("/") { entry = (folder as NSString).appendingPathComponent(entry) }
            expand(entry, into: &expansion, enclosingPlaylists: enclosingPlaylists)
        }
    }
}
