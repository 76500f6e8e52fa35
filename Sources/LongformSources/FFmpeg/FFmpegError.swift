import CFFmpeg

/// An FFmpeg return code turned into a Swift error at the boundary.
struct FFmpegError: Error, CustomStringConvertible {
    /// The negative AVERROR code.
    let code: Int32
    /// The call that returned it.
    let operation: String
    /// Our words for why, when FFmpeg's would mislead (an interrupt's "Immediate exit requested").
    var reason: String?

    /// The code `code` returned by `operation`, explained by `reason` when given.
    init(code: Int32, operation: String, reason: String? = nil) {
        self.code = code
        self.operation = operation
        self.reason = reason
    }

    /// FFmpeg's own words for the code, or the reason given.
    var message: String {
        if let reason { return reason }
        var buffer = [CChar](repeating: 0, count: 256)
        av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    var description: String { "\(operation): \(message)" }

    var isEndOfFile: Bool { code == longform_averror_eof() }
    var isTryAgain: Bool { code == longform_averror_eagain() }

    /// Throws when `code` is negative.
    static func check(_ code: Int32, _ operation: @autoclosure () -> String) throws(FFmpegError) {
        if code < 0 { throw FFmpegError(code: code, operation: operation()) }
    }
}
