/// Why a path was refused or a library could not be set up; names the path.
public enum LibraryError: Error, Equatable, CustomStringConvertible, Sendable {
    /// A music directory that does not exist or is not a directory.
    case notADirectory(String)
    /// A path that names no file (or an unreadable one).
    case noSuchFile(String)
    /// A path that resolves outside every music directory (`..`, or a symlink that leads out).
    case outsideMusicDirectories(String)
    /// A file path given when no music directory was configured.
    case noMusicDirectories(String)

    /// `"/etc/passwd is outside the music directories"`.
    public var description: String {
        switch self {
        case .notADirectory(let path): "\(path) is not a directory"
        case .noSuchFile(let path): "\(path): no such file"
        case .outsideMusicDirectories(let path): "\(path) is outside the music directories"
        case .noMusicDirectories(let path): "\(path): no music directory is configured, so no file can be added"
        }
    }
}
