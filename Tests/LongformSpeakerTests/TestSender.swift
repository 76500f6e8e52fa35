import Foundation
import LongformCore
import LongformSpeakerProtocol
import LongformTestSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A sender for the tests, on real loopback sockets: a TCP connection to a speaker that sends
/// frames and collects what the speaker answers, and a UDP port that answers clock requests
/// with this machine's monotonic clock (the network clock, as the engine's route will).
final class TestSender: @unchecked Sendable {
    let timingPort: UInt16
    private let timingSocket: Int32
    private let stream: Int32
    private let received = Mutex<[SpeakerMessage]>([])
    private let isClosed = Mutex(false)

    /// Connects to the speaker at 127.0.0.1:`port`.
    init(speakerPort: Int) throws {
        let (timing, port) = try LoopbackSocket.bound(type: Int32(SOCK_DGRAM.rawValue))
        timingSocket = timing
        timingPort = port
        stream = try LoopbackSocket.connect(port: speakerPort)
        Thread.detachNewThread { Self.answerClockRequests(on: timing) }
        Thread.detachNewThread { [self] in readReplies() }
    }

    deinit { close() }

    struct SenderFailure: Error, CustomStringConvertible { var description: String }

    private static func answerClockRequests(on descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 128)
        while true {
            var from = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = withUnsafeMutablePointer(to: &from) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(descriptor, &buffer, buffer.count, 0, $0, &length) } }
            let t2 = HostClock.now()
            guard count > 0 else { return }
            guard let request = ClockExchange.decodeRequest(buffer[0..<count]) else { continue }
            let reply = ClockExchange.encode(ClockExchange.Reply(sequence: request.sequence, t1: request.t1, t2: t2, t3: HostClock.now()))
            _ = withUnsafePointer(to: &from) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(descriptor, reply, reply.count, 0, $0, length) } }
        }
    }

    private func readReplies() {
        var decoder = SpeakerFrameDecoder()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(stream, &buffer, buffer.count, 0)
            guard count > 0 else { isClosed.withLock { $0 = true }; return }
            decoder.append(buffer[0..<count])
            while let frame = try? decoder.nextFrame() {
                if case .message(let message) = frame { received.withLock { $0.append(message) } }
            }
        }
    }

    /// Sends messages, in order.
    func send(_ messages: SpeakerMessage...) throws {
        for message in messages { try send(bytes: message.encoded()) }
    }

    /// Sends raw bytes.
    func send(bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(stream, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw SenderFailure(description: "send: \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    /// The messages received so far.
    var messages: [SpeakerMessage] { received.withLock { $0 } }
    /// Whether the speaker closed the connection.
    var wasClosed: Bool { isClosed.withLock { $0 } }

    /// Waits up to `timeout` s for a received message that `match` picks.
    func waitFor<T>(timeout: Double = 5, _ match: (SpeakerMessage) -> T?) -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = messages.lazy.compactMap(match).first { return found }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return nil
    }

    func close() {
        shutdown(stream, Int32(SHUT_RDWR))
        shutdown(timingSocket, Int32(SHUT_RDWR))
    }

    /// Stereo 16-bit audio from `first`: the ramp of `RampAudio` (left = frame % 16384, right = its negation).
    static func ramp(_ first: Int64, _ count: Int) -> SpeakerMessage {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * 4)
        for frame in first..<(first + Int64(count)) {
            for value in [RampAudio.value(ofFrame: frame), -RampAudio.value(ofFrame: frame)] {
                let bits = UInt16(bitPattern: value)
                bytes += [UInt8(bits & 0xFF), UInt8(bits >> 8)]
            }
        }
        return .audio(firstFrame: first, frameCount: UInt32(count), samples: bytes)
    }
}
