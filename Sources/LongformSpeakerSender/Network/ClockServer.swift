import Logging
import LongformCore
import LongformRoutes
import LongformSpeakerProtocol
import Synchronization

/// The sender's side of the clock exchange: answers every speaker's request on one UDP port with
/// the host clock, which is the network clock of its group. On its own thread, so that an answer
/// never waits behind audio.
final class ClockServer: @unchecked Sendable {
    private let socket: PosixSocket
    private let thread = RouteThread()
    /// The keys of the pairing secrets of the routes it serves: a tagged request is answered
    /// only if one of them made its tag, and the answer is tagged with it.
    private let keys = LockedValue<[ClockKey]>([])
    /// The port speakers are told in `hello`.
    let port: Int

    /// A server on `port` (0: a free one); `start()` begins answering.
    init(port requestedPort: Int = 0) throws(SocketError) {
        socket = try PosixSocket.boundDatagramSocket(port: requestedPort)
        socket.setTimeouts(seconds: 0.25)
        socket.stampArrivals()
        port = socket.localPort
    }

    /// Answers requests tagged with `key` too (a route's pairing secret's).
    func accept(_ key: ClockKey) {
        keys.withLock { keys in if !keys.contains(key) { keys.append(key) } }
    }

    /// Answers requests from now to the process's end.
    func start() {
        let socket = socket, keys = keys
        thread.start(name: "longform.route.speaker.clock") { thread in
            while !thread.shouldStop {
                guard let datagram = socket.receiveDatagram() else { continue }
                // Anything that is not a request (a tag no secret made included) is dropped without an answer.
                guard let (request, key) = ClockExchange.decodeRequest(datagram.bytes, keys: keys.value) else { continue }
                // t2 is when the request arrived, stamped by the system: time it waited for this
                // thread (a busy host) counts as time held here, not as time on the network.
                let reply = ClockExchange.Reply(sequence: request.sequence, t1: request.t1, t2: datagram.receivedAt, t3: HostClock.now())
                socket.sendDatagram(ClockExchange.encode(reply, key: key), to: datagram.sender, length: datagram.senderLength)
            }
        }
    }
}

extension ClockServer {
    /// The process's servers, by the port asked for (0: the one on a free port, also under its own port).
    private static let servers = Mutex<[Int: ClockServer]>([:])

    /// The process's clock server on `port` (0: one on a free port, shared by every route that
    /// asks for a free one), started at the first call and kept to the process's end, answering
    /// requests tagged with `key` too from now on (a key is kept as long as the server). Its
    /// answers are the host clock, the same for every route, so routes share it: a route that
    /// takes over from another on a fixed port (a restart, a new route of the same speakers) finds
    /// the port serving instead of taken.
    static func shared(onPort port: Int, key: ClockKey?) throws(SocketError) -> ClockServer {
        let server = try servers.withLock { servers throws(SocketError) -> ClockServer in
            if let server = servers[port] { return server }
            let server = try ClockServer(port: port)
            server.start()
            servers[port] = server
            servers[server.port] = server
            return server
        }
        if let key { server.accept(key) }
        return server
    }
}
