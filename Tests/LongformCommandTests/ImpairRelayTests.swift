import Foundation
import LongformTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `scripts/impair --rate`: the link toward a host carries no more than its rate, and a datagram
/// to that host waits behind the TCP data queued ahead of it, no longer than the relay's queue.
@Suite struct ImpairRelayTests {
    /// A port free on loopback now (`kind`: SOCK_STREAM or SOCK_DGRAM).
    private static func freePort(_ kind: __socket_type) throws -> Int {
        let descriptor = socket(AF_INET, Int32(kind.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        try #require(bound, "no free port")
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Sends 4 MB through the TCP relay to 127.0.0.2 as fast as it takes them, and meanwhile a
    /// datagram every 50 ms through the UDP relay to an echo on that host (its answer comes back
    /// to 127.0.0.1, on the other direction's link); prints the seconds the 4 MB took and the
    /// datagrams' round trips while the fill ran.
    private static let peer = """
        import json, socket, sys, threading, time
        relay_tcp, sink_port, relay_udp, echo_port = map(int, sys.argv[1:5])
        sink = socket.socket(); sink.bind(("127.0.0.2", sink_port)); sink.listen(1)
        echo = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); echo.bind(("127.0.0.2", echo_port))
        received = [0]
        def drain():
            connection, _ = sink.accept()
            while True:
                data = connection.recv(65536)
                if not data: return
                received[0] += len(data)
        def answer():
            while True:
                data, client = echo.recvfrom(2048); echo.sendto(data, client)
        threading.Thread(target=drain, daemon=True).start()
        threading.Thread(target=answer, daemon=True).start()
        sender = socket.create_connection(("127.0.0.1", relay_tcp))
        clock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); clock.settimeout(2)
        start = time.monotonic(); trips = []
        def fill():
            sender.sendall(b"x" * 4_000_000); sender.shutdown(socket.SHUT_WR)
        threading.Thread(target=fill, daemon=True).start()
        time.sleep(0.3)
        # Until the last 300 kB (the relay's queue and the sockets' buffers are then draining).
        while received[0] < 3_700_000 and time.monotonic() - start < 20:
            sent = time.monotonic(); clock.sendto(b"t" * 40, ("127.0.0.1", relay_udp)); clock.recvfrom(2048)
            trips.append(time.monotonic() - sent); time.sleep(0.05)
        while received[0] < 4_000_000 and time.monotonic() - start < 20: time.sleep(0.01)
        print(json.dumps({"seconds": time.monotonic() - start, "received": received[0], "trips": trips}))
        """

    @Test func aLinkOfEightMegabitsCarriesAMegabyteASecondAndADatagramQueuesBehindTheFill() throws {
        let (relayTCP, sink, relayUDP, echo) = (try Self.freePort(SOCK_STREAM), try Self.freePort(SOCK_STREAM), try Self.freePort(SOCK_DGRAM), try Self.freePort(SOCK_DGRAM))
        let proxy = try ImpairmentProxy(delay: 0, jitter: 0, rate: 8, tcp: ["127.0.0.1:\(relayTCP)=127.0.0.2:\(sink)"], udp: ["127.0.0.1:\(relayUDP)=127.0.0.2:\(echo)"])
        defer { withExtendedLifetime(proxy) {} }
        let run = try ExternalTool.run("python3", ["-c", Self.peer, "\(relayTCP)", "\(sink)", "\(relayUDP)", "\(echo)"])
        try #require(run.status == 0, "\(run.errorOutput)")
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        let seconds = try #require(figures["seconds"] as? Double), trips = try #require(figures["trips"] as? [Double])
        #expect(figures["received"] as? Int == 4_000_000)
        // 4 MB at 1 MB/s (the datagrams' bytes are few).
        #expect(seconds > 3.9 && seconds < 4.6, "4 MB in \(seconds) s")
        // Behind the queue toward the echo's host (256 KiB and the chunk on the link: 0.3 s at
        // 1 MB/s), never much more; the answers' link is free.
        try #require(trips.count >= 8, "round trips \(trips)")
        let median = trips.sorted()[trips.count / 2]
        #expect(median > 0.2 && median < 0.4 && (trips.max() ?? 1) < 0.45, "round trips \(trips)")
    }
}
