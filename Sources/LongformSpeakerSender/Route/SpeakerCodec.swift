import LongformSpeakerProtocol

/// How a speaker route's audio goes on the wire: `speaker:HOST:PORT,…?codec=NAME`.
public enum SpeakerCodec: String, Sendable, CaseIterable {
    /// FLAC blocks of 16-bit samples: the 16-bit samples exactly, in a third to a half of their bytes.
    case flac
    /// 16-bit PCM.
    case pcm
    /// 32-bit float PCM: the renderer's samples untouched, twice 16-bit PCM's bytes.
    case float

    /// The codec a route uses when its name gives none: a third of 16-bit PCM's bytes on the
    /// bench's music, and no more of a speaker's CPU than PCM (docs/benchmarks.md).
    public static let `default` = SpeakerCodec.flac

    /// The encoding the `format` message names.
    var encoding: AudioStreamFormat.Encoding {
        switch self {
        case .flac: .flac
        case .pcm: .signed16
        case .float: .float32
        }
    }
}
