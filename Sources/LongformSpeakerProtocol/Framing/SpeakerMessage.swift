/// One message of the speaker protocol (docs/speaker-protocol.md), decoded.
public enum SpeakerMessage: Sendable, Equatable {
    /// Sender → speaker: who is sending, which session (a new one empties the buffer), and the
    /// UDP port on the sender's address that answers clock requests.
    case hello(sessionID: [UInt8], senderName: String, timingPort: UInt16)
    /// Speaker → sender: its name, its buffer's capacity, and where its buffer ends for this session (-1: nothing).
    case welcome(speakerName: String, bufferCapacityFrames: UInt64, bufferEndFrame: Int64)
    /// Speaker → sender, answering `hello` when the speaker requires pairing: its nonce.
    case challenge(nonce: [UInt8])
    /// Sender → speaker: its nonce and the proof that it knows the pairing secret.
    case proof(nonce: [UInt8], proof: [UInt8])
    /// Sender → speaker: the audio's format from now on.
    case format(AudioStreamFormat)
    /// Sender → speaker: `frameCount` frames from `firstFrame`, interleaved, in the stream format
    /// (PCM: the samples; FLAC: one FLAC frame holding them).
    case audio(firstFrame: Int64, frameCount: UInt32, samples: [UInt8])
    /// Sender → speaker: "rate R, media frame F at network time N".
    case anchor(RateAnchor)
    /// Sender → speaker: drop everything from `fromFrame` on, if it has not been played.
    case flush(requestID: UInt32, fromFrame: Int64)
    /// Speaker → sender: whether a flush was done, and the first frame not yet played.
    case flushResult(requestID: UInt32, isAccepted: Bool, firstUnplayedFrame: Int64)
    /// Sender → speaker: this speaker's volume and its group's, each 0 to 1.
    case volume(speaker: Float, group: Float)
    /// Sender → speaker: what plays.
    case metadata(title: String, artist: String, album: String)
    /// Sender → speaker: the cover.
    case artwork(mimeType: String, data: [UInt8])
    /// Both ways, after 2 s without another frame.
    case keepAlive
    /// Speaker → sender: its buffer, its playhead and its clock estimate.
    case status(SpeakerStatus)
    /// Both ways: a refusal, with an HTTP-like code.
    case error(code: UInt16, message: String)

    /// The type byte of `error`.
    public static let errorType: UInt8 = 0x3F

    /// The message's type byte on the wire.
    public var type: UInt8 {
        switch self {
        case .hello: 0x01
        case .welcome: 0x02
        case .challenge: 0x03
        case .proof: 0x04
        case .format: 0x10
        case .audio: 0x11
        case .anchor: 0x12
        case .flush: 0x13
        case .flushResult: 0x14
        case .volume: 0x20
        case .metadata: 0x21
        case .artwork: 0x22
        case .keepAlive: 0x30
        case .status: 0x31
        case .error: Self.errorType
        }
    }
}

/// The audio's format on the wire.
public struct AudioStreamFormat: Sendable, Equatable {
    /// How samples are written.
    public enum Encoding: UInt8, Sendable {
        /// Signed 16-bit little-endian.
        case signed16 = 1
        /// IEEE float 32-bit little-endian.
        case float32 = 2
        /// Signed 16-bit samples, each audio message one FLAC frame that decodes on its own.
        case flac = 3

        /// Bytes per sample: PCM's on the wire; FLAC's 16-bit samples once decoded (a FLAC frame
        /// is at most about that, FLAC falling back to verbatim samples where it cannot compress).
        public var bytesPerSample: Int { self == .float32 ? 4 : 2 }
        /// Whether an audio message holds a compressed block rather than the samples themselves.
        public var isCompressed: Bool { self == .flac }
    }

    /// Frames per second.
    public var sampleRate: UInt32
    /// Interleaved channels.
    public var channelCount: UInt8
    /// The sample encoding.
    public var encoding: Encoding

    /// A format.
    public init(sampleRate: UInt32, channelCount: UInt8, encoding: Encoding) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.encoding = encoding
    }

    /// Bytes per frame.
    public var bytesPerFrame: Int { Int(channelCount) * encoding.bytesPerSample }
}

/// "Rate R, media frame F at network time N".
public struct RateAnchor: Sendable, Equatable {
    /// 0 holds, 1 plays.
    public var rate: Double
    /// The media frame the anchor names.
    public var mediaFrame: Int64
    /// When it leaves the speaker's output, on the sender's clock (ns).
    public var networkTime: UInt64

    /// An anchor.
    public init(rate: Double, mediaFrame: Int64, networkTime: UInt64) {
        self.rate = rate
        self.mediaFrame = mediaFrame
        self.networkTime = networkTime
    }
}

/// What a speaker reports.
public struct SpeakerStatus: Sendable, Equatable {
    /// The media frame its buffer ends at (-1: empty).
    public var bufferEndFrame: Int64
    /// The first frame a change can still reach (-1: not playing): the next frame it hands its
    /// output, or, for an output that takes back what it holds, the frame at its first changeable one.
    public var nextFrame: Int64
    /// Its estimate of sender clock − own clock (ns).
    public var clockOffset: Int64
    /// How far off that estimate may be (ns).
    public var clockUncertainty: UInt64
    /// Whether it can play in step: its clock estimate is good enough and its output plays.
    public var isSynchronized: Bool
    /// Whether it is playing.
    public var isPlaying: Bool

    /// A status.
    public init(bufferEndFrame: Int64, nextFrame: Int64, clockOffset: Int64, clockUncertainty: UInt64, isSynchronized: Bool, isPlaying: Bool) {
        self.bufferEndFrame = bufferEndFrame
        self.nextFrame = nextFrame
        self.clockOffset = clockOffset
        self.clockUncertainty = clockUncertainty
        self.isSynchronized = isSynchronized
        self.isPlaying = isPlaying
    }
}
