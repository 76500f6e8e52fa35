/// A run of audio on its way to a renderer: PCM frames or compressed packets, with
/// CMSampleBuffer's timing (presentation time, duration, trims, output presentation time).
public struct SampleBuffer: Sendable {
    /// The audio itself.
    public enum Content: Sendable {
        /// PCM: one byte array per plane (one in all for interleaved audio).
        case pcm(planes: [[UInt8]])
        /// Compressed packets, each as one byte array, in decoding order.
        case packets([[UInt8]])
    }

    /// The format of `content`.
    public var format: AudioFormat
    /// The audio.
    public var content: Content
    /// Frames of audio before trimming (for packets: frames they decode to).
    public var frameCount: Int
    /// Where the first frame sits on the item's or the timeline's time axis.
    public var presentationTime: MediaTime
    /// Length before trimming, `frameCount / sampleRate`.
    public var duration: MediaTime
    /// Audio at the start to decode but not play (decoder priming, a seek's lead-in).
    public var trimDurationAtStart: MediaTime = .zero
    /// Audio at the end to decode but not play (encoder padding).
    public var trimDurationAtEnd: MediaTime = .zero
    /// An explicit output presentation time; `.invalid` means "computed from PTS and trim".
    private var explicitOutputPresentationTime: MediaTime = .invalid

    /// A PCM buffer; `planes` must hold `frameCount` frames in `format`.
    public init(pcmFormat format: AudioFormat, planes: [[UInt8]], frameCount: Int, presentationTime: MediaTime) {
        precondition(format.isPCM, "a PCM buffer needs a PCM format")
        precondition(planes.count == format.planeCount, "\(planes.count) planes for \(format)")
        precondition(planes.allSatisfy { $0.count >= frameCount * format.bytesPerFrameInPlane }, "planes shorter than \(frameCount) frames")
        self.format = format
        self.content = .pcm(planes: planes)
        self.frameCount = frameCount
        self.presentationTime = presentationTime
        self.duration = MediaTime(value: Int64(frameCount), timescale: Int32(format.sampleRate))
    }

    /// A buffer of compressed packets that decode to `frameCount` frames.
    public init(compressedFormat format: AudioFormat, packets: [[UInt8]], frameCount: Int, presentationTime: MediaTime) {
        self.format = format
        self.content = .packets(packets)
        self.frameCount = frameCount
        self.presentationTime = presentationTime
        self.duration = MediaTime(value: Int64(frameCount), timescale: Int32(format.sampleRate))
    }

    /// When the first untrimmed frame is heard: PTS + start trim unless set explicitly;
    /// setting `.invalid` returns to the computed value.
    public var outputPresentationTime: MediaTime {
        get { explicitOutputPresentationTime.isValid ? explicitOutputPresentationTime : presentationTime + trimDurationAtStart }
        set { explicitOutputPresentationTime = newValue }
    }

    /// Length after trimming.
    public var outputDuration: MediaTime { duration - trimDurationAtStart - trimDurationAtEnd }

    /// Frames trimmed at the start, at the buffer's own rate.
    public var trimmedFramesAtStart: Int { Self.frames(trimDurationAtStart, rate: format.sampleRate, limit: frameCount) }
    /// Frames trimmed at the end, at the buffer's own rate.
    public var trimmedFramesAtEnd: Int { Self.frames(trimDurationAtEnd, rate: format.sampleRate, limit: frameCount - trimmedFramesAtStart) }
    /// Frames that are heard.
    public var outputFrameCount: Int { frameCount - trimmedFramesAtStart - trimmedFramesAtEnd }

    private static func frames(_ time: MediaTime, rate: Int, limit: Int) -> Int {
        guard time.isNumeric, time.value > 0 else { return 0 }
        let value = time.convertScale(Int32(rate), method: .roundHalfAwayFromZero).value
        return Int(min(max(value, 0), Int64(limit)))
    }

    /// The end of the output, `outputPresentationTime + outputDuration`.
    public var outputEndTime: MediaTime { outputPresentationTime + outputDuration }
}
