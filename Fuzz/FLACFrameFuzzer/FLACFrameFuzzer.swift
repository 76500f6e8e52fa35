import FuzzSupport
import LongformSources
import LongformSpeakerProtocol

/// A speaker's FLAC decoder (`FLACFrameDecoder`) against any bytes as an audio message's payload
/// (a damaged or hostile frame): the first byte picks the channels (1 or 2), the next two the
/// frames the message says it holds, the rest is the frame. Invariants: it never traps, and a
/// frame it takes, FFmpeg's decoder takes too and gives the same samples.
enum FLACFrameFuzzer {
    /// Each channel count's decoders, ours and FFmpeg's (one input at a time: no sharing).
    nonisolated(unsafe) static let decoders = (1...2).map { channels in
        (ours: try! FLACFrameDecoder(sampleRate: 44_100, channelCount: channels), ffmpeg: try! FLACBlockDecoder(sampleRate: 44_100, channelCount: channels))
    }

    static func run(_ bytes: [UInt8]) {
        guard bytes.count >= 3 else { return }
        let channels = 1 + Int(bytes[0] & 1)
        let frameCount = 1 + (Int(bytes[1]) << 8 | Int(bytes[2])) % 4_608
        let frame = Array(bytes.dropFirst(3))
        let (ours, ffmpeg) = decoders[channels - 1]
        guard let samples = try? ours.decode(frame, frameCount: frameCount) else { return }
        let theirs = try? ffmpeg.decode(frame, frameCount: frameCount)
        FuzzInput.require(theirs == samples, "a frame of \(frame.count) bytes taken as \(frameCount) frames of \(channels) channels, which FFmpeg's decoder \(theirs == nil ? "refuses" : "reads otherwise")")
    }
}

/// Runs under libFuzzer or replays saved inputs (see `FuzzInput`).
@main struct FLACFrameFuzzerMain {
    static func main() { FuzzInput.main(FLACFrameFuzzer.run) }
}
