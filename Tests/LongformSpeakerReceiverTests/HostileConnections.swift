import Foundation
import LongformSpeakerProtocol
import LongformTestSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Connections to a speaker that never become its sender, on real loopback sockets: a few held
/// open by trickling bytes (`held`), and a flood opened at a fixed rate (`flood`). Each notes
/// when the speaker closed it.
enum HostileConnections {
    /// How a held connection keeps itself busy.
    enum Kind: CaseIterable, Sendable {
        /// A frame header one byte a second, then its payload as slowly: never a whole frame.
        case slowHeader
        /// A frame of an unknown type every half second: a speaker skips those.
        case unknownFrames
        /// A hello at once, then a proof's header one byte a second: never paired.
        case helloWithoutProof
    }

    /// Held connections, trickled every quarter second on a thread of their own until stopped.
    final class Held: @unchecked Sendable {
        /// When each was opened and, once seen, how long after that the speaker closed it (s).
        private let state: Mutex<[(kind: Kind, descriptor: Int32, opened: Date, closedAfter: Double?)]>
        private let stopped = Mutex(false)

        /// Opens one connection of each of `kinds` to 127.0.0.1:`port`.
        init(port: Int, kinds: [Kind]) throws {
            var connections: [(kind: Kind, descriptor: Int32, opened: Date, closedAfter: Double?)] = []
            for kind in kinds {
                connections.append((kind, try LoopbackSocket.connect(port: port), Date(), nil))
            }
            state = Mutex(connections)
            Thread.detachNewThread { [self] in trickle() }
        }

        deinit { stop() }

        /// How long after its opening the speaker closed each (nil: still open), in `kinds`' order.
        var closedAfter: [Double?] { state.withLock { $0.map(\.closedAfter) } }

        /// Closes those still open and ends the thread.
        func stop() {
            stopped.withLock { $0 = true }
            state.withLock { connections in
                for index in connections.indices where connections[index].descriptor >= 0 {
                    Glibc.close(connections[index].descriptor)
                    connections[index].descriptor = -1
                }
            }
        }

        private func trickle() {
            var tick = 0
            while !stopped.withLock({ $0 }) {
                state.withLock { connections in
                    for index in connections.indices where connections[index].descriptor >= 0 && connections[index].closedAfter == nil {
                        let connection = connections[index]
                        let bytes = Self.bytes(for: connection.kind, tick: tick)
                        if HostileConnections.isClosedByPeer(connection.descriptor) || !HostileConnections.send(bytes, on: connection.descriptor) {
                            connections[index].closedAfter = Date().timeIntervalSince(connection.opened)
                        }
                    }
                }
                tick += 1
                Thread.sleep(forTimeInterval: 0.25)
            }
        }

        /// What a connection of `kind` sends at tick `tick` (four a second).
        private static func bytes(for kind: Kind, tick: Int) -> [UInt8] {
            // A hello's header announcing 64 bytes, then those bytes: never complete in a test's time.
            let slowFrame: [UInt8] = [0x4C, 0x46, 2, 0x01, 0, 0, 0, 64] + Array(repeating: 0, count: 64)
            let proofFrame: [UInt8] = [0x4C, 0x46, 2, 0x04, 0, 0, 0, 64] + Array(repeating: 0, count: 64)
            switch kind {
            case .slowHeader:
                return tick % 4 == 0 ? [slowFrame[min(tick / 4, slowFrame.count - 1)]] : []
            case .unknownFrames:
                return tick % 2 == 0 ? [0x4C, 0x46, 2, 0x7E, 0, 0, 0, 4, 1, 2, 3, 4] : []
            case .helloWithoutProof:
                if tick == 0 { return SpeakerMessage.hello(sessionID: Array(repeating: 9, count: 16), senderName: "stranger", timingPort: 9).encoded() }
                return tick % 4 == 0 ? [proofFrame[min(tick / 4 - 1, proofFrame.count - 1)]] : []
            }
        }
    }

    /// What a flood did.
    struct FloodResult: Sendable, CustomStringConvertible {
        /// Connections opened.
        var opened: Int
        /// Connections that could not be opened within 100 ms.
        var failed: Int
        /// How long the flood took, in seconds.
        var seconds: Double

        var description: String { "\(opened) connections opened (\(failed) failed) in \(String(format: "%.2f", seconds)) s" }
    }

    /// Opens `count` connections to 127.0.0.1:`port`, `perSecond` a second, on a thread of its
    /// own: by turns garbage then closed, an unknown frame then held, nothing then held, half a
    /// header then held. At most `held` are kept open (the oldest closed first); all are closed at
    /// the end. `done` gets the result.
    static func flood(port: Int, count: Int, perSecond: Int, held: Int = 64, done: @escaping @Sendable (FloodResult) -> Void) {
        Thread.detachNewThread {
            let start = Date()
            var open: [Int32] = []
            var opened = 0
            var failed = 0
            for index in 0..<count {
                let due = start.addingTimeInterval(Double(index) / Double(perSecond))
                let wait = due.timeIntervalSinceNow
                if wait > 0 { Thread.sleep(forTimeInterval: wait) }
                guard let descriptor = connect(port: port) else { failed += 1; continue }
                opened += 1
                switch index % 4 {
                case 0:
                    _ = send(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), on: descriptor)
                    Glibc.close(descriptor)
                    continue
                case 1: _ = send([0x4C, 0x46, 2, 0x7D, 0, 0, 0, 2, 0xAB, 0xCD], on: descriptor)
                case 2: break
                default: _ = send([0x4C, 0x46, 2, 0x01], on: descriptor)
                }
                open.append(descriptor)
                if open.count > held { Glibc.close(open.removeFirst()) }
            }
            for descriptor in open { Glibc.close(descriptor) }
            done(FloodResult(opened: opened, failed: failed, seconds: Date().timeIntervalSince(start)))
        }
    }

    /// A TCP connection to 127.0.0.1:`port`, or nil if it is not made within 100 ms.
    static func connect(port: Int) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var target = LoopbackSocket.address(port: UInt16(port))
        let connected = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Sends `bytes` without blocking; false if the connection is gone.
    static func send(_ bytes: [UInt8], on descriptor: Int32) -> Bool {
        guard !bytes.isEmpty else { return true }
        let written = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        return written >= 0 || errno == EAGAIN
    }

    /// Whether the peer closed `descriptor` (an end of stream or an error waiting), without blocking.
    static func isClosedByPeer(_ descriptor: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 { continue } // what the speaker said (an error message): read past it
            return count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)
        }
    }
}
