import Foundation
import LongformCore
import LongformRendering
@testable import LongformSpeakerSender
import LongformSpeakerProtocol
import Testing

/// The sender's clock port: routes of one process share the server on a port, so a route that
/// takes over from another on a fixed port (`LONGFORM_SPEAKER_TIMING_PORT`) starts.
@Suite struct ClockServerTests {
    /// Renders silence: the route needs a source to start, and no speaker answers here.
    final class SilentSource: RouteRenderSource, @unchecked Sendable {
        func render(into buffer: UnsafeMutableBufferPointer<Float>, frameCount: Int, atRouteFrame routeFrame: Int64) -> Int {
            buffer.update(repeating: 0)
            return frameCount
        }
    }

    /// A port free now (bound and let go).
    private static func freePort() throws -> Int {
        let socket = try PosixSocket.boundDatagramSocket(port: 0)
        return socket.localPort
    }

    @Test func twoRoutesOnOneFixedPortBothStartAndTheClockIsAnswered() throws {
        let port = try Self.freePort()
        // Nothing listens at port 9: the links try again in the background.
        let nowhere = [SpeakerEndpoint(parsing: "127.0.0.1:9")!]
        let first = SpeakerRoute(endpoints: nowhere, timingPort: port), second = SpeakerRoute(endpoints: nowhere, timingPort: port)
        try first.start(pullingFrom: SilentSource())
        defer { first.stop(waiting: true) }
        // The first is still alive and holds its port: a second route on it used to fail with "no port for the clock".
        try second.start(pullingFrom: SilentSource())
        defer { second.stop(waiting: true) }

        let socket = try PosixSocket.connectedDatagramSocket(host: "127.0.0.1", port: port)
        socket.setTimeouts(seconds: 1)
        let t1 = HostClock.now()
        socket.sendDatagram(ClockExchange.encode(ClockExchange.Request(sequence: 7, t1: t1)))
        let reply = try #require(socket.receiveDatagram().flatMap { ClockExchange.decodeReply($0.bytes) }, "no answer on port \(port)")
        #expect(reply.sequence == 7 && reply.t1 == t1 && reply.t2 >= t1 && reply.t3 >= reply.t2)
    }

    @Test func aServerWithASecretAnswersRequestsTaggedWithItAndUntaggedOnesOnly() throws {
        let port = try Self.freePort()
        let key = ClockKey(secret: try PairingSecret(passphrase: "a long random secret for the tests"))
        _ = try ClockServer.shared(onPort: port, key: key)
        let socket = try PosixSocket.connectedDatagramSocket(host: "127.0.0.1", port: port)
        socket.setTimeouts(seconds: 2)
        /// The reply to request `sequence` tagged with `key`, or nil when none comes within 2 s
        /// (a late reply to an earlier request is not taken for it).
        func ask(_ sequence: UInt32, key: ClockKey?) -> [UInt8]? {
            socket.sendDatagram(ClockExchange.encode(ClockExchange.Request(sequence: sequence, t1: HostClock.now()), key: key))
            while let bytes = socket.receiveDatagram()?.bytes {
                if ClockExchange.decodeReply(bytes)?.sequence == sequence { return bytes }
            }
            return nil
        }
        let tagged = try #require(ask(1, key: key), "a tagged request is answered")
        #expect(ClockExchange.decodeReply(tagged, key: key)?.sequence == 1, "tagged with the same key")
        let other = ClockKey(secret: try PairingSecret(passphrase: "another long random secret"))
        #expect(ask(2, key: other) == nil, "a request another secret tagged is dropped")
        let plain = try #require(ask(3, key: nil), "a speaker without a secret is answered")
        #expect(ClockExchange.decodeReply(plain)?.sequence == 3 && ClockExchange.decodeReply(plain, key: key) == nil, "untagged")
    }
}
