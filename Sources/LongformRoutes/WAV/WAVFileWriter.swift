import Foundation

/// Owns an open WAV file: writes the header, appends samples, and patches the sizes when closed.
/// Handed to the route thread once created and used only there, hence `@unchecked Sendable`.
final class WAVFileWriter: @unchecked Sendable {
    private let handle: FileHandle
    let path: String
    let sampleRate: Int
    let channelCount: Int
    let sampleFormat: OutputSampleFormat
    private(set) var framesWritten: Int64 = 0
    private var encoded: [UInt8] = []
    private var isClosed = false

    /// Creates (or truncates) `path` and writes a header for the format.
    init(path: String, sampleRate: Int, channelCount: Int, sampleFormat: OutputSampleFormat) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        self.path = path
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.sampleFormat = sampleFormat
        try handle.write(contentsOf: header(dataBytes: 0))
    }

    deinit { try? close() }

    /// Appends interleaved frames.
    func write(_ samples: UnsafeBufferPointer<Float>) throws {
        sampleFormat.encode(samples, into: &encoded)
        try handle.write(contentsOf: encoded)
        framesWritten += Int64(samples.count / channelCount)
    }

    /// Writes the final sizes and closes the file.
    func close() throws {
        guard !isClosed else { return }
        isClosed = true
        let dataBytes = framesWritten * Int64(channelCount * sampleFormat.bytesPerSample)
        try handle.seek(toOffset: 0)
        try handle.write(contentsOf: header(dataBytes: min(dataBytes, Int64(UInt32.max - 64))))
        try handle.close()
    }

    /// RIFF/WAVE header: PCM (tag 1) or IEEE float (tag 3, with a fact chunk).
    private func header(dataBytes: Int64) -> Data {
        var data = Data()
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
