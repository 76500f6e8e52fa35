import CFFmpeg

/// Why a FLAC block could not be encoded or decoded; names the block or the call at fault.
public enum FLACCodecError: Error, Equatable, CustomStringConvertible {
    /// The FFmpeg build has no FLAC encoder or decoder.
    case codecUnavailable(String)
    /// A format FLAC cannot carry (a rate or channel count out of its range).
    case unsupportedFormat(String)
    /// A block's samples do not make whole frames, or more frames than a block holds.
    case invalidBlock(String)
    /// A block that does not decode to the frames it should (corrupt, cut short, or another format's).
    case malformedBlock(String)
    /// An FFmpeg call failed: the call and FFmpeg's reason.
    case ffmpeg(operation: String, message: String)

    public var description: String {
        switch self {
        case .codecUnavailable(let what): "FLAC is not available: \(what)"
        case .unsupportedFormat(let why): "FLAC cannot carry this format: \(why)"
        case .invalidBlock(let why): "invalid block: \(why)"
        case .malformedBlock(let why): "malformed FLAC block: \(why)"
        case .ffmpeg(let operation, let message): "\(operation): \(message)"
        }
    }

    /// Throws `unsupportedFormat` for a rate or channel count FLAC cannot carry.
    static func checkFormat(sampleRate: Int, channelCount: Int) throws(FLACCodecError) {
        guard (1...655_350).contains(sampleRate) else { throw .unsupportedFormat("a rate of \(sampleRate) Hz (FLAC: 1 to 655,350)") }
        guard (1...8).contains(channelCount) else { throw .unsupportedFormat("\(channelCount) channels (FLAC: 1 to 8)") }
    }

    /// The error for an FFmpeg status.
    init(_ error: FFmpegError) { self = .ffmpeg(operation: error.operation, message: error.message) }
}
