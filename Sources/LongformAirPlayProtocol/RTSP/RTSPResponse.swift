/// One RTSP response from a receiver.
public struct RTSPResponse: Sendable, Equatable {
    /// The status code: 200, 401, 453…
    public var statusCode: Int
    /// The status line's words (`OK`, `Unauthorized`).
    public var reason: String
    /// The headers, in order.
    public var headers: RTSPHeaders
    /// The body (`Content-Length` bytes).
    public var body: [UInt8]

    /// A response.
    public init(statusCode: Int, reason: String, headers: RTSPHeaders = RTSPHeaders(), body: [UInt8] = []) {
        self.statusCode = statusCode
        self.reason = reason
        self.headers = headers
        self.body = body
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(statusCode) }

    /// `"401 Unauthorized"`.
    public var statusLine: String { "\(statusCode) \(reason)" }
}

/// Splits the bytes a receiver sends on its RTSP connection into responses. A value type fed
/// bytes as they arrive: it holds an incomplete response until the rest comes.
public struct RTSPResponseParser: Sendable {
    /// The largest header block taken (bytes): receivers send a few hundred.
    public static let maximumHeaderBytes = 16 * 1024
    /// The largest body taken (bytes): a receiver's plist answers are a few kilobytes.
    public static let maximumBodyBytes = 1024 * 1024

    private var pending: [UInt8] = []

    /// A parser holding nothing.
    public init() {}

    /// Takes bytes that arrived.
    public mutating func append(_ bytes: some Sequence<UInt8>) { pending.append(contentsOf: bytes) }

    /// The next complete response, or nil until more bytes come; throws on bytes that are not RTSP
    /// (the connection is then of no further use).
    public mutating func nextResponse() throws(AirPlayProtocolError) -> RTSPResponse? {
        guard let end = Self.headerEnd(in: pending) else {
            if pending.count > Self.maximumHeaderBytes { throw .responseTooLarge(bytes: Self.maximumHeaderBytes) }
            return nil
        }
        guard end <= Self.maximumHeaderBytes else { throw .responseTooLarge(bytes: Self.maximumHeaderBytes) }
        guard let head = String(validating: pending[..<end], as: UTF8.self) else { throw .malformedResponse("headers are not UTF-8") }
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0] == "RTSP/1.0" || parts[0] == "HTTP/1.1", let code = Int(parts[1]), (100...999).contains(code) else {
            throw .malformedResponse("status line '\(statusLine.prefix(80))'")
        }
        var headers = RTSPHeaders()
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw .malformedResponse("header line '\(line.prefix(80))'") }
            headers.add(String(line[..<colon]).trimmingSpaces(), String(line[line.index(after: colon)...]).trimmingSpaces())
        }
        var length = 0
        if let text = headers["Content-Length"] {
            guard let value = Int(text), value >= 0 else { throw .malformedResponse("Content-Length '\(text.prefix(40))'") }
            guard value <= Self.maximumBodyBytes else { throw .responseTooLarge(bytes: Self.maximumBodyBytes) }
            length = value
        }
        let bodyStart = end + 4
        guard pending.count >= bodyStart + length else { return nil }
        let body = Array(pending[bodyStart..<(bodyStart + length)])
        pending.removeFirst(bodyStart + length)
        return RTSPResponse(statusCode: code, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers, body: body)
    }

    /// The index of the blank line's `\r\n\r\n`, if the header block is complete.
    private static func headerEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs, as RTSP's header fields are read.
    public func trimmingSpaces() -> String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }
}
