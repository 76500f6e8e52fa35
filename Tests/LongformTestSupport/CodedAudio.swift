import Foundation

/// Items whose every sample says which item and which frame it is, so that a rendered file can be
/// read back as "item k, frame f" frame by frame. Sample f of item k holds the integer
/// k × 65 536 + f in a 24-bit FLAC (made by sox from raw samples), mono at 8 kHz; rendered to
/// Float32 it is exactly that integer / 2^23. Silence is 0, which no item holds (k starts at 1).
public enum CodedAudio {
    /// The rate of every coded item and of the renders that read them.
    public static let sampleRate = 8_000
    /// The longest item: frame numbers fit in 16 bits.
    public static let maximumFrames = 65_535

    /// What one output frame is.
    public enum Frame: Equatable, CustomStringConvertible, Sendable {
        case silence
        case item(code: Int, frame: Int)

        public var description: String {
            switch self {
            case .silence: "silence"
            case .item(let code, let frame): "item \(code) frame \(frame)"
            }
        }
    }

    private static let lock = NSLock()

    /// Makes (once) item `code` (1...127) of `frames` frames as FLAC; returns its path.
    @discardableResult
    public static func item(_ code: Int, frames: Int) throws -> String {
        precondition((1...127).contains(code) && (1...maximumFrames).contains(frames))
        lock.lock()
        defer { lock.unlock() }
        let output = TestAudio.path("coded-\(code)-\(frames).flac")
        if FileManager.default.fileExists(atPath: output) { return output }
        let raw = output + ".raw"
        var samples = [Int32](repeating: 0, count: frames)
        for frame in 0..<frames { samples[frame] = Int32(code * 65_536 + frame) << 8 }
        try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: raw)) }
        // 32-bit input whose low 8 bits are zero, written as 24-bit without dither: exact.
        let temporary = output + ".part.flac"
        try ExternalTool.check("sox", ["-D", "-t", "raw", "-e", "signed", "-b", "32", "-r", "\(sampleRate)", "-c", "1", raw, "-b", "24", temporary])
        try FileManager.default.moveItem(atPath: temporary, toPath: output)
        try? FileManager.default.removeItem(atPath: raw)
        return output
    }

    /// Reads a Float32 mono render back, frame by frame. A sample that is neither silence nor a
    /// coded value is a failure to find what was rendered, and is reported as item 0.
    public static func frames(of samples: [Float]) -> [Frame] {
        samples.map { sample in
            if sample == 0 { return .silence }
            let value = Double(sample) * 8_388_608
            guard value == value.rounded(), value > 0 else { return .item(code: 0, frame: 0) }
            let integer = Int(value)
            return .item(code: integer >> 16, frame: integer & 0xFFFF)
        }
    }

    /// A short description of a run of frames: `"item 2 frames 0..<4000, silence ×800, item 3 frames 0..<200"`.
    public static func summary(_ frames: ArraySlice<Frame>) -> String {
        var parts: [String] = []
        var index = frames.startIndex
        while index < frames.endIndex {
            var end = index + 1
            switch frames[index] {
            case .silence:
                while end < frames.endIndex, frames[end] == .silence { end += 1 }
                parts.append("silence ×\(end - index)")
            case .item(let code, let first):
                while end < frames.endIndex, frames[end] == .item(code: code, frame: first + (end - index)) { end += 1 }
                parts.append("item \(code) frames \(first)..<\(first + end - index)")
            }
            index = end
        }
        return parts.joined(separator: ", ")
    }
}
