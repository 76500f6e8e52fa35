/// How one sample is stored.
public enum SampleFormat: String, Sendable, Hashable, CaseIterable {
    /// Signed 16-bit integers.
    case int16
    /// Signed 32-bit integers (24-bit audio is carried left-justified in these).
    case int32
    /// 32-bit IEEE floats in [-1, 1].
    case float32
    /// 64-bit IEEE floats in [-1, 1].
    case float64

    /// Bytes per sample.
    public var bytesPerSample: Int {
        switch self {
        case .int16: 2
        case .int32, .float32: 4
        case .float64: 8
        }
    }
}

/// The shape of PCM audio, or the codec of compressed packets.
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second.
    public var sampleRate: Int
    /// Channels per frame.
    public var channelCount: Int
    /// How a sample is stored (for PCM).
    public var sampleFormat: SampleFormat
    /// Whether channels alternate within one plane (true) or each has its own plane.
    public var isInterleaved: Bool
    /// Significant bits per sample, when fewer than the storage holds (24 in an `int32`).
    public var bitsPerSample: Int
    /// The codec name of compressed packets (`"aac"`, `"flac"`…), or nil for PCM.
    public var codec: String?

    /// A PCM format.
    public init(sampleRate: Int, channelCount: Int, sampleFormat: SampleFormat = .float32, isInterleaved: Bool = true, bitsPerSample: Int? = nil) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.sampleFormat = sampleFormat
        self.isInterleaved = isInterleaved
        self.bitsPerSample = bitsPerSample ?? sampleFormat.bytesPerSample * 8
        self.codec = nil
    }

    /// A compressed format, decoded before it can be played.
    public init(compressedCodec codec: String, sampleRate: Int, channelCount: Int) {
        self.init(sampleRate: sampleRate, channelCount: channelCount)
        self.codec = codec
    }

    /// Whether samples are PCM (not compressed packets).
    public var isPCM: Bool { codec == nil }

    /// Bytes per frame within one plane.
    public var bytesPerFrameInPlane: Int { sampleFormat.bytesPerSample * (isInterleaved ? channelCount : 1) }

    /// Number of planes a buffer of this format holds.
    public var planeCount: Int { isInterleaved ? 1 : channelCount }

    /// `44100 Hz, 2 ch, float32 interleaved`.
    public var description: String {
        if let codec { return "\(codec) \(sampleRate) Hz, \(channelCount) ch" }
        return "\(sampleRate) Hz, \(channelCount) ch, \(sampleFormat.rawValue)\(bitsPerSample != sampleFormat.bytesPerSample * 8 ? " (\(bitsPerSample)-bit)" : "") \(isInterleaved ? "interleaved" : "planar")"
    }
}
