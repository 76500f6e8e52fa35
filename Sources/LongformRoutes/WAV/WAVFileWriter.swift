#if canImport(Glibc)
import Glibc
#endif

/// A WAV file that could not be created or written, naming it and the system's reason.
struct WAVFileError: Error, CustomStringConvertible {
    /// The file.
    var path: String
    /// What failed, and strerror's words for why.
    var reason: String

    var description: String { "\(path): \(reason)" }

    /// The error `action` met, from errno.
    static func last(_ action: String, path: String) -> WAVFileError {
        WAVFileError(path: path, reason: systemFailure(action))
    }
}

/// Owns an open WAV file (its descriptor, closed in `deinit`): writes the header, appends
/// samples, and patches the sizes when closed. Handed to the route thread once created and used
/// only there, hence `@unchecked Sendable`.
final class WAVFileWriter: @unchecked Sendable {
    private let descriptor: Int32
    let path: String
    let sampleRate: Int
    let channelCount: Int
    let sampleFormat: OutputSampleFormat
    private(set) var framesWritten: Int64 = 0
    private var encoded: [UInt8] = []
    private var isClosed = false

    /// Creates (or truncates) `path` and writes a header for the format.
    init(path: String, sampleRate: Int, channelCount: Int, sampleFormat: OutputSampleFormat) throws(WAVFileError) {
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .last("create the file", path: path) }
        self.path = path
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.sampleFormat = sampleFormat
        try writeAll(header(dataBytes: 0))
    }

    deinit { try? close() }

    /// Appends interleaved frames.
    func write(_ samples: UnsafeBufferPointer<Float>) throws(WAVFileError) {
        sampleFormat.encode(samples, into: &encoded)
        try writeAll(encoded)
        framesWritten += Int64(samples.count / channelCount)
    }

    /// Writes the final sizes and closes the file.
    func close() throws(WAVFileError) {
        guard !isClosed else { return }
        isClosed = true
        defer { _ = Glibc.close(descriptor) }
        let dataBytes = framesWritten * Int64(channelCount * sampleFormat.bytesPerSample)
        guard lseek(descriptor, 0, SEEK_SET) == 0 else { throw .last("rewind the file", path: path) }
        try writeAll(header(dataBytes: min(dataBytes, Int64(UInt32.max - 64))))
    }

    /// Writes every byte, going on after a signal or a short write.
    private func writeAll(_ bytes: [UInt8]) throws(WAVFileError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw .last("write the file", path: path)
            }
            offset += written
        }
    }

    /// RIFF/WAVE header: PCM (tag 1) or IEEE float (tag 3, with a fact chunk).
    private func header(dataBytes: Int64) -> [UInt8] {
        var data: [UInt8] = []
        func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        func u16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        let isFloat = sampleFormat == .f32
        let blockAlign = channelCount * sampleFormat.bytesPerSample
        let fmtSize: UInt32 = isFloat ? 18 : 16
        let factSize: UInt32 = isFloat ? 12 : 0
        data.append(contentsOf: Array("RIFF".utf8)); u32(UInt32(4 + 8 + fmtSize + factSize + 8) + UInt32(dataBytes))
        data.append(contentsOf: Array("WAVE".utf8))
        data.append(contentsOf: Array("fmt ".utf8)); u32(fmtSize)
        u16(isFloat ? 3 : 1); u16(UInt16(channelCount)); u32(UInt32(sampleRate))
        u32(UInt32(sampleRate * blockAlign)); u16(UInt16(blockAlign)); u16(UInt16(sampleFormat.bytesPerSample * 8))
        if isFloat {
            u16(0)
            data.append(contentsOf: Array("fact".utf8)); u32(4); u32(UInt32(truncatingIfNeeded: framesWritten))
        }
        data.append(contentsOf: Array("data".utf8)); u32(UInt32(dataBytes))
        return data
    }
}
