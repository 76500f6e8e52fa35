import Crypto
import FuzzSupport
import LongformSpeakerProtocol

/// The speaker protocol's frame decoder against any bytes a stranger sends (the first byte
/// picks where the stream is split in two and whether the connection has paired). Invariants:
/// split or whole, the same frames and the same error; what it holds between frames stays under a
/// frame's size; every message it accepts encodes back to a frame that decodes to itself.
enum SpeakerFrameFuzzer {
    /// The key a paired connection opens sealed frames with (fixed: the fuzzer forges frames for it).
    static let key = SymmetricKey(data: [UInt8](repeating: 7, count: 32))

    static func run(_ input: [UInt8]) {
        guard let control = input.first else { return }
        let bytes = Array(input.dropFirst())
        let isPaired = control & 0x80 != 0
        let split = bytes.isEmpty ? 0 : Int(control & 0x7F) * bytes.count / 127
        let whole = decode([bytes[...]], isPaired: isPaired)
        let pieces = decode([bytes[..<split], bytes[split...]], isPaired: isPaired)
        FuzzInput.require(whole == pieces, "split at \(split): \(whole) != \(pieces)")
        for case .message(let message) in whole.frames {
            var again = SpeakerFrameDecoder()
            again.append(message.encoded())
            let decoded = try? again.nextFrame()
            FuzzInput.require(decoded == .message(message), "\(message) re-decodes as \(String(describing: decoded))")
        }
    }

    /// The frames (and the error that ended them) when `pieces` arrive one after another.
    static func decode(_ pieces: [ArraySlice<UInt8>], isPaired: Bool) -> Outcome {
        var decoder = SpeakerFrameDecoder(maximumPayloadLength: isPaired ? SpeakerFrame.maximumPayloadLength : SpeakerFrame.maximumGreetingPayloadLength)
        if isPaired { decoder.opener = FrameOpener(key: key) }
        var outcome = Outcome()
        for piece in pieces {
            decoder.append(piece)
            do {
                while let frame = try decoder.nextFrame() { outcome.frames.append(frame) }
            } catch {
                outcome.error = "\(error)"
                return outcome
            }
            FuzzInput.require(decoder.bufferedByteCount < SpeakerFrame.headerLength + decoder.maximumPayloadLength + piece.count,
                              "\(decoder.bufferedByteCount) bytes held between frames")
        }
        return outcome
    }

    /// What a stream decoded to.
    struct Outcome: Equatable, CustomStringConvertible {
        var frames: [SpeakerFrameDecoder.Frame] = []
        var error: String?
        var description: String { "\(frames.count) frame(s), error \(error ?? "none")" }
    }
}

/// Runs under libFuzzer or replays saved inputs (see `FuzzInput`).
@main struct SpeakerFrameFuzzerMain {
    static func main() { FuzzInput.main(SpeakerFrameFuzzer.run) }
}
