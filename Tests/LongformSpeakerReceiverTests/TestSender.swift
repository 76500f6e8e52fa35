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
/// with this machine's monotonic clock (the network clock, as the engine's route will). Given a
/// pairing secret, it answers a challenge with its proof and seals what it sends from then on,
/// and answers clock requests tagged with the secret's key, tagged.
final class TestSender: @unchecked Sendable {
    let timingPort: UInt16
    private let timingSocket: Int32
    private let stream: Int32
    private let received = Mutex<[SpeakerMessage]>([])
    private let isClosed = Mutex(false)
    private let secret: PairingSecret?
    /// The last hello sent (its session id goes into a proof), and the sealer once paired; the
    /// lock also keeps sends in order.
    private let sending = Mutex<(hello: [UInt8]?, sealer: FrameSealer?)>((nil, nil))

    /// Connects to the speaker at 127.0.0.1:`port`; with `secret`, pairs when challenged.
    init(speakerPort: Int, secret: PairingSecret? = nil) throws {
        self.secret = secret
        let (timing, port) = try LoopbackSocket.bound(type: Int32(SOCK_DGRAM.rawValue))
        timingSocket = timing
        timingPort = port
        stream = try LoopbackSocket.connect(port: speakerPort)
        let keys = secret.map { [ClockKey(secret: $0)] } ?? []
        Thread.detachNewThread { Self.answerClockRequests(on: timing, keys: keys) }
        Thread.detachNewThread { [self] in readReplies() }
    }

    deinit { close() }

    struct SenderFailure: Error, CustomStringConvertible { var description: String }

    private static func answerClockRequests(on descriptor: Int32, keys: [ClockKey]) {
        var buffer = [UInt8](repeating: 0, count: 128)
        while true {
            var from = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = withUnsafeMutablePointer(to: &from) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(descriptor, &buffer, buffer.count, 0, $0, &length) } }
            let t2 = HostClock.now()
            guard count > 0 else { return }
            guard let (request, key) = ClockExchange.decodeRequest(buffer[0..<count], keys: keys) else { continue }
            let reply = ClockExchange.encode(ClockExchange.Reply(sequence: request.sequence, t1: request.t1, t2: t2, t3: HostClock.now()), key: key)
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
                guard case .message(let message) = frame else { continue }
                if case .challenge(let speakerNonce) = message, let secret { decoder.opener = pair(secret: secret, speakerNonce: speakerNonce) }
                received.withLock { $0.append(message) }
            }
        }
    }

    /// Answers a challenge with the proof for the last hello; returns the opener for what the
    /// speaker sends from here (nil without a hello: the speaker will refuse).
    private func pair(secret: PairingSecret, speakerNonce: [UInt8]) -> FrameOpener? {
        sending.withLock { state in
            guard let sessionID = state.hello else { return nil }
            let senderNonce = PairingHandshake.makeNonce()
            let proof = PairingHandshake.proof(secret: secret, sessionID: sessionID, speakerNonce: speakerNonce, senderNonce: senderNonce)
            try? sendUnlocked(bytes: SpeakerMessage.proof(nonce: senderNonce, proof: proof).encoded())
            let keys = PairingHandshake.sessionKeys(secret: secret, speakerNonce: speakerNonce, senderNonce: senderNonce)
            state.sealer = FrameSealer(key: keys.senderToSpeaker)
            return FrameOpener(key: keys.speakerToSender)
        }
    }

    /// Sends messages, in order (sealed once paired).
    func send(_ messages: SpeakerMessage...) throws {
        try sending.withLock { state in
            for message in messages {
                if case .hello(let sessionID, _, _) = message { state.hello = sessionID }
                try sendUnlocked(bytes: state.sealer?.seal(message) ?? message.encoded())
            }
        }
    }

    /// Sends raw bytes.
    func send(bytes: [UInt8]) throws {
        try sending.withLock { _ in try sendUnlocked(bytes: bytes) }
    }

    private func sendUnlocked(bytes: [UInt8]) throws {
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
