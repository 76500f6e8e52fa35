import Logging
import LongformCore
import LongformRoutes
import LongformSpeakerProtocol

/// The sender's side of the clock exchange: answers every speaker's request on one UDP port with
/// the host clock, which is the network clock of its group. On its own thread, so that an answer
/// never waits behind audio.
final class ClockServer: @unchecked Sendable {
    private let socket: PosixSocket
    private let thread = RouteThread()
    /// The port speakers are told in `hello`.
    let port: Int

    /// A server on `port` (0: a free one); `start()` begins answering.
    init(port requestedPort: Int = 0) throws(SocketError) {
        socket = try PosixSocket.boundDatagramSocket(port: requestedPort)
        socket.setTimeouts(seconds: 0.25)
        socket.stampArrivals()
        port = socket.localPort
    }

    /// Answers requests until `stop()`.
    func start() {
        let socket = socket
        thread.start(name: "longform.route.speaker.clock") { thread in
            while !thread.shouldStop {
                guard let datagram = socket.receiveDatagram() else { continue }
                // Anything that is not a request is dropped without an answer.
                guard let request = ClockExchange.decodeRequest(datagram.bytes) else { continue }
                // t2 is when the request arrived, stamped by the system: time it waited for this
                // thread (a busy host) counts as time held here, not as time on the network.
                let reply = ClockExchange.Reply(sequence: request.sequence, t1: request.t1, t2: datagram.receivedAt, t3: HostClock.now())
                socket.sendDatagram(ClockExchange.encode(reply), to: datagram.sender, length: datagram.senderLength)
            }
        }
    }

    /// Stops answering and waits for the thread.
    func stop() {
        thread.stop(waiting: true)
    }
}
