import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An RTSP server on 127.0.0.1 that misbehaves as a broken or busy AirPlay receiver does, for the
/// sender's fault tests: it answers OPTIONS and then refuses or talks nonsense.
public final class HostileRTSPReceiver: @unchecked Sendable {
    /// How it misbehaves.
    public enum Behavior: Sendable {
        /// Answers ANNOUNCE `453 Not Enough Bandwidth`, as a receiver playing for another sender does.
        case refusesAnnounce
        /// Answers every request after OPTIONS with bytes that are not RTSP.
        case answersGarbage
    }

    /// The port it listens on.
    public let port: Int
    private let behavior: Behavior
    private let listener: Int32
    private let lock = NSLock()
    private var requests: [String] = [] // under `lock`
    private var isClosed = false // under `lock`

    /// Listens on a free port and answers as `behavior` says, until released.
    public init(_ behavior: Behavior) throws {
        self.behavior = behavior
        let (descriptor, port) = try LoopbackSocket.bound(type: Int32(SOCK_STREAM.rawValue))
        guard listen(descriptor, 8) == 0 else { throw ExternalTool.Failure(description: "listen: \(String(cString: strerror(errno)))") }
        listener = descriptor
        self.port = Int(port)
        Thread.detachNewThread { [self] in acceptConnections() }
    }

    deinit {
        lock.lock()
        isClosed = true
        lock.unlock()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// The methods of the requests it was sent, in order.
    public var methods: [String] {
        lock.lock()
        defer { lock.unlock() }
        return requests
    }

    private func acceptConnections() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            Thread.detachNewThread { [self] in serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else { return }
            received += chunk[..<count]
            // One request at a time: its headers, and its body by Content-Length.
            while let end = Self.headerEnd(in: received) {
                let head = String(decoding: received[..<end], as: UTF8.self)
                let bodyLength = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                guard received.count >= end + 4 + bodyLength else { break }
                received.removeFirst(end + 4 + bodyLength)
                let method = String(head.prefix { $0 != " " })
                let sequence = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("cseq:") }.map { $0.dropFirst(5).trimmingCharacters(in: .whitespaces) } ?? "0"
                lock.lock()
                requests.append(method)
                lock.unlock()
                let answer: String
                switch (behavior, method) {
                case (_, "OPTIONS"): answer = "RTSP/1.0 200 OK\r\nCSeq: \(sequence)\r\nPublic: ANNOUNCE, SETUP, RECORD, FLUSH, TEARDOWN, OPTIONS, SET_PARAMETER\r\n\r\n"
                case (.refusesAnnounce, "ANNOUNCE"): answer = "RTSP/1.0 453 Not Enough Bandwidth\r\nCSeq: \(sequence)\r\n\r\n"
                case (.refusesAnnounce, _): answer = "RTSP/1.0 200 OK\r\nCSeq: \(sequence)\r\n\r\n"
                case (.answersGarbage, _): answer = "\u{1}\u{2}garbage that is not RTSP\r\n\r\n"
                }
                _ = answer.utf8CString.withUnsafeBufferPointer { send(connection, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL)) }
            }
        }
    }

    private static func headerEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}
