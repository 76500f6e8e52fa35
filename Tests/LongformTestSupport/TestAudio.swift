import Foundation

/// Test audio the tests make themselves with Debian's tools, so that every expected sample is known:
/// a reference WAV per signal, encoded into every format Longform plays.
public enum TestAudio {
    /// The formats, by file extension, and the ffmpeg arguments that encode them.
    public static let encodings: [(name: String, fileExtension: String, arguments: [String], isLossless: Bool)] = [
        ("wav", "wav", ["-c:a", "pcm_s16le"], true),
        ("aiff", "aiff", ["-c:a", "pcm_s16be"], true),
        ("flac", "flac", ["-c:a", "flac"], true),
        ("alac", "alac.m4a", ["-c:a", "alac", "-movie_timescale", "44100"], true),
        ("mp3", "mp3", ["-c:a", "libmp3lame", "-b:a", "192k"], false),
        // ffmpeg writes the MP4 edit list in a 1 kHz movie timescale unless told otherwise, which
        // carries the length only to the millisecond; at the sample rate it is exact.
        ("aac-m4a", "m4a", ["-c:a", "aac", "-b:a", "192k", "-movie_timescale", "44100"], false),
        ("aac-adts", "aac", ["-c:a", "aac", "-b:a", "192k", "-f", "adts"], false),
        ("vorbis", "ogg", ["-c:a", "libvorbis", "-q:a", "5"], false),
        ("opus", "opus", ["-c:a", "libopus", "-b:a", "160k"], false),
    ]

    private static let lock = NSLock()
    nonisolated(unsafe) private static var cachedDirectory: URL?

    /// A directory of this test run's audio, made once per process.
    public static var directory: URL {
        lock.lock()
        defer { lock.unlock() }
        if let cachedDirectory { return cachedDirectory }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("longform-tests-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        cachedDirectory = directory
        return directory
    }

    /// The path of `name` in the test directory.
    public static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Makes (once) a 16-bit stereo reference WAV: a sweep in the left channel and a different sweep
    /// plus a little noise-free chirp in the right, `seconds` long at `sampleRate`, so that any
    /// offset or channel swap shows. Returns its path.
    @discardableResult
    public static func reference(_ name: String, seconds: Double, sampleRate: Int = 44_100, startFrequency: Int = 220) throws -> String {
        let output = path(name + ".wav")
        lock.lock()
        defer { lock.unlock() }
        if FileManager.default.fileExists(atPath: output) { return output }
        try ExternalTool.check("sox", ["-n", "-r", "\(sampleRate)", "-c", "2", "-b", "16", output,
                                       "synth", String(format: "%.6f", seconds), "sine", "\(startFrequency)-\(startFrequency * 8)", "sine", "\(startFrequency * 3)-\(startFrequency)",
                                       "gain", "-3"])
        return output
    }

    /// Encodes a reference into `fileExtension` with `arguments` (once). Returns its path.
    @discardableResult
    public static func encode(_ reference: String, as fileExtension: String, arguments: [String]) throws -> String {
        let output = reference.replacingOccurrences(of: ".wav", with: "") + "." + fileExtension
        lock.lock()
        defer { lock.unlock() }
        if FileManager.default.fileExists(atPath: output) { return output }
        try ExternalTool.check("ffmpeg", ["-nostdin", "-loglevel", "error", "-y", "-i", reference] + arguments + [output])
        return output
    }

    /// What ffmpeg's own decoder makes of `path`, as interleaved Float32 at the file's rate.
    public static func ffmpegDecode(_ path: String, channels: Int = 2) throws -> [Float] {
        let output = path + ".ffmpeg.f32.wav"
        try ExternalTool.check("ffmpeg", ["-nostdin", "-loglevel", "error", "-y", "-i", path, "-ac", "\(channels)", "-c:a", "pcm_f32le", output])
        return try WAVFileReader(path: output).samples
    }

    /// Writes `bytes` to a file in the test directory and returns its path.
    public static func write(_ bytes: [UInt8], named name: String) throws -> String {
        let output = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: output))
        return output
    }
}
