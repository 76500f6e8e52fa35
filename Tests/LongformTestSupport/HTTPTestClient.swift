import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain HTTP/1.1 client on a real loopback socket, written for the tests so that what they
/// check is the bytes a client gets: the status, the headers and the body, and a Server-Sent
/// Events stream read as it arrives.
public struct HTTPTestClient: Sendable {
    /// One response.
    public struct Response: Sendable, CustomStringConvertible {
        /// The status code.
        public var status: Int
        /// Header fields, names lowercased.
        public var headers: [String: String]
        /// The body (chunked transfer decoded).
        public var body: [UInt8]
        /// The body as UTF-8 text.
        public var text: String { String(decoding: body, as: UTF8.self) }
        /// The body parsed as a JSON object (empty when it is not one).
        public var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:] }
        /// `"404 {"error":…}"`.
        public var description: String { "\(status) \(text)" }
    }

    /// A failure of the connection itself (not an HTTP error status).
    public struct Failure: Error, CustomStringConvertible {
        /// What failed.
        public var description: String
        /// A failure described by `description`.
        public init(description: String) { self.description = description }
    }

    /// The server's port on 127.0.0.1.
    public let port: Int
    /// Sent as `Authorization: Bearer …` when set.
    public var token: String?

    /// A client of the server on `port`.
    public init(port: Int, token: String? = nil) {
        self.port = port
        self.token = token
    }

    /// Sends a request and reads the whole response. `json` is sent with `Content-Type: application/json`.
    public func request(_ method: String, _ path: String, json: String? = nil, headers: [String: String] = [:], timeout: Double = 10) throws -> Response {
        let connection = try Connection(port: port, timeout: timeout)
        try connection.send(requestText(method, path, body: json, headers: headers))
        return try connection.readResponse()
    }

    /// `GET path`.
    public func get(_ path: String) throws -> Response { try request("GET", path) }
    /// `POST path` with a JSON body (or none).
    public func post(_ path: String, json: String? = nil) throws -> Response { try request("POST", path, json: json) }
    /// `PUT path` with a JSON body.
    public func put(_ path: String, json: String) throws -> Response { try request("PUT", path, json: json) }
    /// `DELETE path`.
    public func delete(_ path: String) throws -> Response { try request("DELETE", path) }

    /// Opens `GET path` as an event stream; read it with `nextEvent`.
    public func openEventStream(_ path: String = "/api/events", headers: [String: String] = [:]) throws -> EventStream {
        let connection = try Connection(port: port, timeout: 0.2)
        try connection.send(requestText("GET", path, body: nil, headers: headers.merging(["Accept": "text/event-stream"]) { a, _ in a }))
        return try EventStream(connection: connection)
    }

    private func requestText(_ method: String, _ path: String, body: String?, headers: [String: String]) -> [UInt8] {
        var lines = ["\(method) \(path) HTTP/1.1", "Connection: close"]
        if !headers.keys.contains(where: { $0.lowercased() == "host" }) { lines.append("Host: 127.0.0.1:\(port)") }
        if let token { lines.append("Authorization: Bearer \(token)") }
        if let body {
            if headers.keys.contains(where: { $0.lowercased() == "content-type" }) == false { lines.append("Content-Type: application/json") }
            lines.append("Content-Length: \(body.utf8.count)")
        } else if method == "POST" || method == "PUT" {
            lines.append("Content-Length: 0")
        }
        for (name, value) in headers { lines.append("\(name): \(value)") }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n" + (body ?? "")).utf8)
    }
}

/// A Server-Sent Events stream being read.
public final class EventStream: @unchecked Sendable {
    /// The response's status and headers.
    public let status: Int
    /// The response's header fields, names lowercased.
    public let headers: [String: String]
    private let connection: Connection
    private var decoder = ChunkedDecoder()
    private var text = ""

    init(connection: Connection) throws {
        self.connection = connection
        let head = try connection.readHead(deadline: Date().addingTimeInterval(10))
        status = head.status
        headers = head.headers
        decoder.feed(head.rest)
        text += String(decoding: decoder.take(), as: UTF8.self)
    }

    /// The next event (`event:` name and `data:` text), waiting at most `timeout` seconds; nil on
    /// timeout or when the server ended the stream. Comment lines are skipped.
    public func nextEvent(timeout: Double = 5) -> (name: String, data: String)? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            while let end = text.range(of: "\n\n") {
                let block = text[..<end.lowerBound]
                text = String(text[end.upperBound...])
                var name = "message"
                var data: [Substring] = []
                for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                    if line.hasPrefix("event: ") { name = String(line.dropFirst(7)) } else if line.hasPrefix("data: ") { data.append(line.dropFirst(6)) }
                }
                if !data.isEmpty { return (name, data.joined(separator: "\n")) }
            }
            guard Date() < deadline, let bytes = connection.readSome(), !bytes.isEmpty || Date() < deadline else { return nil }
            if bytes.isEmpty { continue }
            decoder.feed(bytes)
            text += String(decoding: decoder.take(), as: UTF8.self)
        }
    }

    /// The next event named `name`, skipping others; its data parsed as a JSON object.
    public func next(named name: String, timeout: Double = 5) -> [String: Any]? {
        let deadline = Date().addingTimeInterval(timeout)
        while let event = nextEvent(timeout: max(deadline.timeIntervalSinceNow, 0)) {
            if event.name == name { return ((try? JSONSerialization.jsonObject(with: Data(event.data.utf8))) as? [String: Any]) ?? [:] }
        }
        return nil
    }

    /// Hangs up.
    public func close() { connection.close() }
}

/// One TCP connection to 127.0.0.1.
final class Connection: @unchecked Sendable {
    private var descriptor: Int32

    init(port: Int, timeout: Double) throws {
        do { descriptor = try LoopbackSocket.connect(port: port) } catch { throw HTTPTestClient.Failure(description: error.description) }
        var interval = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close() }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor); descriptor = -1 }
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw HTTPTestClient.Failure(description: "send: \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    /// Bytes as they come: empty on a receive timeout, nil at the end of the stream or on an error.
    func readSome() -> [UInt8]? {
        guard descriptor >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        if count > 0 { return Array(buffer[0..<count]) }
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return [] }
        return nil
    }

    /// The status line and headers, and whatever body bytes came with them.
    func readHead(deadline: Date) throws -> (status: Int, headers: [String: String], rest: [UInt8]) {
        var received: [UInt8] = []
        while true {
            if let end = received.firstRange(of: [13, 10, 13, 10]) {
                let head = String(decoding: received[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
                let statusParts = head[0].split(separator: " ")
                guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw HTTPTestClient.Failure(description: "bad status line: \(head[0])") }
                var headers: [String: String] = [:]
                for line in head.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                return (status, headers, Array(received[end.upperBound...]))
            }
            guard Date() < deadline else { throw HTTPTestClient.Failure(description: "no response head in time") }
            guard let bytes = readSome() else { throw HTTPTestClient.Failure(description: "the server closed the connection before answering") }
            received += bytes
        }
    }

    /// A whole response of a `Connection: close` request.
    func readResponse() throws -> HTTPTestClient.Response {
        let deadline = Date().addingTimeInterval(30)
        let head = try readHead(deadline: deadline)
        var body = head.rest
        let isChunked = head.headers["transfer-encoding"]?.lowercased().contains("chunked") == true
        let length = head.headers["content-length"].flatMap(Int.init)
        while length.map({ body.count < $0 }) ?? true {
            if isChunked, body.firstRange(of: Array("\r\n0\r\n\r\n".utf8)) != nil || body.starts(with: Array("0\r\n\r\n".utf8)) { break }
            guard Date() < deadline else { throw HTTPTestClient.Failure(description: "the body did not end in time") }
            guard let bytes = readSome() else { break }
            body += bytes
        }
        if isChunked {
            var decoder = ChunkedDecoder()
            decoder.feed(body)
            body = decoder.take()
        }
        return HTTPTestClient.Response(status: head.status, headers: head.headers, body: body)
    }
}

/// Decodes `Transfer-Encoding: chunked` as bytes arrive.
struct ChunkedDecoder {
    private var pending: [UInt8] = []
    private var output: [UInt8] = []

    mutating func feed(_ bytes: [UInt8]) {
        pending += bytes
        while let lineEnd = pending.firstRange(of: [13, 10]) {
            let sizeText = String(decoding: pending[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { pending.removeAll(); return }
            let start = lineEnd.upperBound
            guard pending.count >= start + size + 2 else { return }
            output += pending[start..<(start + size)]
            pending.removeSubrange(0..<(start + size + 2))
        }
    }

    mutating func take() -> [UInt8] {
        defer { output.removeAll() }
        return output
    }
}
