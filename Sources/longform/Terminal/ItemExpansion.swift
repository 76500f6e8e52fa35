import Foundation

/// Turns what the user named into playlist items: files as they are, http(s) URLs as they are,
/// directories into the audio files under them (recursively, in name order), and .m3u/.m3u8
/// playlists into their entries (relative paths taken from the playlist's folder).
enum ItemExpansion {
    /// Extensions taken from directories; anything else there is skipped.
    static let audioExtensions: Set<String> = ["wav", "aif", "aiff", "flac", "mp3", "m4a", "mp4", "aac", "alac", "ogg", "oga", "opus"]

    /// Why an argument could not be expanded.
    struct ExpansionError: Error, CustomStringConvertible {
        var description: String
    }

    /// The items `arguments` stand for, in order.
    static func expand(_ arguments: [String]) throws(ExpansionError) -> [String] {
        var items: [String] = []
        for argument in arguments { items += try expand(argument, depth: 0) }
        return items
    }

    private static func expand(_ argument: String, depth: Int) throws(ExpansionError) -> [String] {
        if isURL(argument) { return [argument] }
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory)
        if exists && isDirectory.boolValue { return try directoryItems(argument) }
        let fileExtension = (argument as NSString).pathExtension.lowercased()
        if exists && (fileExtension == "m3u" || fileExtension == "m3u8") {
            guard depth < 8 else { throw ExpansionError(description: "\(argument): playlists nested more than 8 deep") }
            return try playlistItems(argument, depth: depth)
        }
        // A missing or unreadable file is kept: the player names it and skips it. Paths are made
        // absolute, so that a saved playlist plays from any directory.
        return [URL(fileURLWithPath: argument).standardizedFileURL.path]
    }

    private static func isURL(_ argument: String) -> Bool {
        let lowered = argument.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    private static func directoryItems(_ directory: String) throws(ExpansionError) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory) else {
            throw ExpansionError(description: "\(directory): cannot list the directory")
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
        return files.map { (base as NSString).appendingPathComponent($0) }
    }

    private static func playlistItems(_ path: String, depth: Int) throws(ExpansionError) -> [String] {
        let text: String
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            text = String(decoding: data, as: UTF8.self)
        } catch {
            throw ExpansionError(description: "\(path): cannot read the playlist (\(error.localizedDescription))")
        }
        let folder = (path as NSString).deletingLastPathComponent
        var items: [String] = []
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\u{FEFF}", with: "")
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            var entry = line
            if entry.hasPrefix("file://") { entry = URL(string: entry)?.path ?? entry }
            if !isURL(entry) && !entry.hasPrefix("/") { entry = (folder as NSString).appendingPathComponent(entry) }
            items += try expand(entry, depth: depth + 1)
        }
        return items
    }
}
