/// Why an item could not be opened or decoded; its description names the item and the cause.
public struct SourceError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The kinds of failure a player reports for an item.
    public enum Kind: String, Sendable {
        /// The file does not exist.
        case notFound = "not found"
        /// The file exists but holds no bytes.
        case empty = "empty file"
        /// The file is not readable (permissions, a directory…).
        case unreadable = "unreadable"
        /// No demuxer recognises it, or it holds no audio stream.
        case unsupported = "unsupported"
        /// It looked like audio but its data is damaged beyond decoding.
        case corrupt = "corrupt"
        /// A URL whose server could not be reached or answered with an error.
        case unreachable = "unreachable"
        /// A scheme other than a local path, file:, http: or https:.
        case unsupportedScheme = "unsupported URL scheme"
    }

    /// The item, as the user named it.
    public let location: String
    /// The kind of failure.
    public let kind: Kind
    /// Details, such as FFmpeg's own message.
    public let detail: String

    /// A failure of `location`.
    public init(location: String, kind: Kind, detail: String) {
        self.location = location
        self.kind = kind
        self.detail = detail
    }

    /// `"/music/a.flac: corrupt (Invalid data found when processing input)"`.
    public var description: String { "\(location): \(kind.rawValue)\(detail.isEmpty ? "" : " (\(detail))")" }
}
