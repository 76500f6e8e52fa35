import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The directories whose files a client may play. Every path a client names is resolved (symlinks,
/// `.` and `..`) and must end up inside one of them: neither `../` nor a symlink leads out.
public struct MusicDirectories: Sendable, Equatable {
    /// The directories, as real paths (symlinks resolved).
    public let paths: [String]

    /// The directories; each must exist. Throws naming the first that does not.
    public init(_ directories: [String]) throws(LibraryError) {
        var resolved: [String] = []
        for directory in directories {
            var isDirectory: ObjCBool = false
            guard let real = Self.realPath(directory), FileManager.default.fileExists(atPath: real, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw .notADirectory(directory)
            }
            if !resolved.contains(real) { resolved.append(real) }
        }
        paths = resolved
    }

    /// The real path of the file `path` names: absolute, or relative to a music directory (the
    /// first in which it exists). Throws if it names no file or resolves outside the directories.
    public func confine(_ path: String) throws(LibraryError) -> String {
        guard !paths.isEmpty else { throw .noMusicDirectories(path) }
        let candidates = path.hasPrefix("/") ? [path] : paths.map { ($0 as NSString).appendingPathComponent(path) }
        // Refused by its letters first, whether or not it exists: an answer must not tell whether
        // a file exists elsewhere on the machine. (A symlink inside can still lead out: below.)
        guard candidates.contains(where: { contains(realPath: Self.lexicallyNormalized($0)) }) else { throw .outsideMusicDirectories(path) }
        guard let real = candidates.lazy.compactMap(Self.realPath).first else { throw .noSuchFile(path) }
        guard contains(realPath: real) else { throw .outsideMusicDirectories(path) }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: real, isDirectory: &isDirectory), !isDirectory.boolValue else { throw .noSuchFile(path) }
        return real
    }

    /// Whether a real (resolved) path lies inside one of the directories.
    public func contains(realPath: String) -> Bool {
        paths.contains { realPath == $0 || realPath.hasPrefix($0 == "/" ? "/" : $0 + "/") }
    }

    /// `/a/b/../c/./d` as `/a/c/d`, without looking at the file system.
    static func lexicallyNormalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// `realpath(3)`: nil when the path names nothing.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
