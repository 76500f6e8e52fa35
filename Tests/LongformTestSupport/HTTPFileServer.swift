import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A real HTTP/1.0 server on a loopback socket, serving the test audio directory (200 with the
/// file, 404 otherwise), for items given as URLs. It runs on a thread of the test process:
/// a helper process would be reparented into the test runner and upset Foundation's `Process`.
/// `stall/BYTES/SECONDS/NAME` serves NAME's first BYTES bytes (with the whole file's length),
/// then sends nothing for SECONDS seconds before it hangs up: a stream that stalls.
/// `trickle/BYTES/SECONDS/NAME` serves the first BYTES bytes, then one byte every SECONDS
/// seconds for a minute: a stream that never stalls outright and never delivers.
public enum HTTPFileServer {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var base: String?
    /// Connections being served, by the file's name.
    private static let connections = Mutex<[String: Int]>([:])

    /// How many connections for the file `name` are open now (a client that hung up on a stalled
    /// or trickling stream counts until the server's next write to it fails).
    public static func openConnectionCount(to name: String) -> Int {
        connections.withLock { $0[name] ?? 0 }
    }

    /// The server's base URL (`http://127.0.0.1:PORT/`), serving `TestAudio.directory`.
    public static func start() throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if let base { return base }
        let (listener, port) = try LoopbackSocket.bound(type: Int32(SOCK_STREAM.rawValue))
        guard listen(listener, 16) == 0 else { throw ExternalTool.Failure(description: "listen: \(errno)") }
        let directory = TestAudio.directory.path
        let thread = Thread {
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { continue }
                DispatchQueue.global().async { serve(connection, directory: directory) }
            }
        }
        thread.start()
        base = "http://127.0.0.1:\(port)/"
        return base!
    }

    private static func serve(_ connection: Int32, directory: String) {
        defer { close(connection) }
        var request = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !request.suffix(4).elementsEqual([13, 10, 13, 10]) && request.count < 65_536 {
            let count = read(connection, &chunk, chunk.count)
            guard count > 0 else { return }
            request.append(contentsOf: chunk[0..<count])
        }
        let requestLine = String(decoding: request.prefix { $0 != 13 }, as: UTF8.self).split(separator: " ")
        var name = requestLine.count >= 2 ? String(requestLine[1].dropFirst()).removingPercentEncoding ?? "" : ""
        var stall: (bytes: Int, seconds: Double, isTrickle: Bool)?
        let parts = name.split(separator: "/", maxSplits: 3).map(String.init)
        if parts.count == 4, ["stall", "trickle"].contains(parts[0]), let bytes = Int(parts[1]), let seconds = Double(parts[2]) {
            stall = (bytes, seconds, parts[0] == "trickle")
            name = parts[3]
        }
        let path = directory + "/" + name
        connections.withLock { $0[name, default: 0] += 1 }
        defer { connections.withLock { $0[name, default: 1] -= 1 } }
        guard !name.isEmpty, !name.contains(".."), let body = FileManager.default.contents(atPath: path) else {
            reply(connection, Array("HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
            return
        }
        reply(connection, Array("HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8))
        guard requestLine.first != "HEAD" else { return }
        if let stall {
            reply(connection, [UInt8](body.prefix(stall.bytes)))
            guard stall.isTrickle else { return Thread.sleep(forTimeInterval: stall.seconds) }
            let end = Date().addingTimeInterval(60)
            var offset = stall.bytes
            while offset < body.count && Date() < end {
                Thread.sleep(forTimeInterval: stall.seconds)
                guard send(connection, [body[offset]], 1, Int32(MSG_NOSIGNAL)) == 1 else { return }
                offset += 1
            }
            return
        }
        reply(connection, [UInt8](body))
    }

    /// Writes all of `bytes`; a client that hung up ends it (MSG_NOSIGNAL: no SIGPIPE for the test process).
    private static func reply(_ connection: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return }
            offset += written
        }
    }
}
