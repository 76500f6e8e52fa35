/// The constants of a frame on the stream: `LF`, the version, the type, the payload length, the payload.
public enum SpeakerFrame {
    /// The first two bytes of every frame.
    public static let magic: (UInt8, UInt8) = (0x4C, 0x46) // "LF"
    /// The protocol version this implementation speaks (2: FLAC audio). A frame of another
    /// version is refused with an error naming both, so that peers of different versions part clearly.
    public static let version: UInt8 = 2
    /// Magic, version, type and length.
    public static let headerLength = 8
    /// The longest payload accepted: a little over 10 s of 44.1 kHz stereo 16-bit audio.
    public static let maximumPayloadLength = 4 << 20
    /// The longest payload accepted before a sender has said hello.
    public static let maximumGreetingPayloadLength = 4 << 10
    /// Media frames lie in `0...maximumMediaFrame` (2^53: exact as a Double, and no sum of two
    /// overflows), which is 6,000 years at 48 kHz.
    public static let maximumMediaFrame: Int64 = 1 << 53
    /// A peer silent this long is gone (a half-open connection), in nanoseconds.
    public static let idleLimitNanoseconds: UInt64 = 10_000_000_000
    /// After this much quiet a side sends a keep-alive, in nanoseconds.
    public static let keepAliveIntervalNanoseconds: UInt64 = 2_000_000_000
    /// The type of a sealed frame (a paired connection's every frame after the proof).
    public static let sealedType: UInt8 = 0x40
    /// Bytes of the Poly1305 tag at the end of a sealed frame's payload.
    public static let sealTagLength = 16

    /// The room (frames) a speaker's buffer of `capacityFrames` must have for the speaker to read
    /// on: the largest audio payload in frames of `bytesPerFrame`, or half the buffer if that is
    /// less. Both sides go by it: the speaker stops reading under it, and the sender keeps its
    /// fill short of it.
    public static func readingRoomFrames(capacityFrames: Int, bytesPerFrame: Int) -> Int {
        min(maximumPayloadLength / max(bytesPerFrame, 1), capacityFrames / 2)
    }

    /// The 8 header bytes of a frame of `type` with a payload of `payloadLength` bytes.
    public static func header(type: UInt8, payloadLength: Int) -> [UInt8] {
        [magic.0, magic.1, version, type, UInt8(truncatingIfNeeded: payloadLength >> 24), UInt8(truncatingIfNeeded: payloadLength >> 16),
         UInt8(truncatingIfNeeded: payloadLength >> 8), UInt8(truncatingIfNeeded: payloadLength)]
    }
}
