import FuzzSupport
import LongformSources

/// The MP3 gapless tag reader (Xing/Info and LAME headers) against any first bytes of a file.
/// Invariant: what it reports fits the tag's fields (delay and padding are 12-bit, frames 32-bit).
enum MP3GaplessFuzzer {
    static func run(_ bytes: [UInt8]) {
        guard let info = MP3GaplessInfo.parse(bytes) else { return }
        FuzzInput.require((0..<4096).contains(info.delay) && (0..<4096).contains(info.padding), "\(info)")
        FuzzInput.require((0...Int(UInt32.max)).contains(info.frameCount), "\(info)")
    }
}

/// Runs under libFuzzer or replays saved inputs (see `FuzzInput`).
@main struct MP3GaplessFuzzerMain {
    static func main() { FuzzInput.main(MP3GaplessFuzzer.run) }
}
