import Foundation
import LongformTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A client that opens the event stream and stops reading costs the server a bounded amount of
/// memory (what it queues for the client, which the client could read later), whatever the
/// playlist's length; the playlist's length is bounded too.
@Suite struct SlowClientTests {
    @Test func aClientThatStopsReadingIsLetGoOnceItsQueueHoldsEightMegabytes() throws {
        let running = try RunningServer("slow-client", itemSeconds: 1)
        let client = running.client
        let thousand = "{\"items\": [" + Array(repeating: #"{"path": "album/one.flac"}"#, count: 1000).joined(separator: ",") + "]}"
        for _ in 0..<3 { #expect(try client.post("/api/playlist/items", json: thousand).status == 201) }
        let playlistEventBytes = try client.get("/api/playlist").body.count
        #expect(playlistEventBytes > 300_000, "each playlist event is \(playlistEventBytes) bytes")

        // A client that asks for the events and stops reading, with a receive buffer of 64 KB (a
        // tiny one would make reading it all back later take minutes of delayed acknowledgements).
        // Connection: close, so that the end of its stream is the end of the connection.
        let stalled = try LoopbackSocket.connect(port: running.port)
        defer { close(stalled) }
        var window: Int32 = 65_536
        setsockopt(stalled, SOL_SOCKET, SO_RCVBUF, &window, socklen_t(MemoryLayout<Int32>.size))
        let request = Array("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(running.port)\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(stalled, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Thread.sleep(forTimeInterval: 0.5)

        // 100 moves: 100 playlist events (over 40 MB) for a client that reads none of them.
        let ids = try running.playlistIDs()
        for move in 0..<100 {
            #expect(try client.post("/api/playlist/items/\(ids[move])/move", json: #"{"index": \#(2_999 - move)}"#).status == 204)
        }
        Thread.sleep(forTimeInterval: 0.5)

        // What the server kept for it is what it can still read: at most the 8 MiB queue and the
        // sockets' buffers (a few MB on loopback), then the end. Unbounded, it was every event.
        var received = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var interval = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(stalled, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        while true {
            let count = recv(stalled, &buffer, buffer.count, 0)
            guard count > 0 else { #expect(count == 0, "the server ended the stream (recv \(count), errno \(errno))"); break }
            received += count
        }
        #expect(received < 20 << 20, "\(received / 1_048_576) MB were kept for a client that stopped reading (100 events: \(100 * playlistEventBytes / 1_048_576) MB)")

        // A reading client is served as before.
        let events = try client.openEventStream()
        defer { events.close() }
        #expect(events.next(named: "state") != nil)
    }

    @Test func thePlaylistsLengthIsCappedWithAClearRefusal() throws {
        let running = try RunningServer("playlist-cap", itemSeconds: 1)
        let client = running.client
        let thousand = "{\"items\": [" + Array(repeating: #"{"path": "album/two.flac"}"#, count: 1000).joined(separator: ",") + "]}"
        for _ in 0..<16 { #expect(try client.post("/api/playlist/items", json: thousand).status == 201) }
        let refused = try client.post("/api/playlist/items", json: thousand)
        #expect(refused.status == 409 && (refused.json["error"] as? String)?.contains("the playlist holds 16000 items; adding 1000 would pass its limit of 16384") == true,
                "\(refused.text)")
        #expect(try running.playlistIDs().count == 16_000)
        let fits = "{\"items\": [" + Array(repeating: #"{"path": "album/two.flac"}"#, count: 384).joined(separator: ",") + "]}"
        #expect(try client.post("/api/playlist/items", json: fits).status == 201)
        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "album/one.flac"}]}"#).status == 409)
        #expect(try running.playlistIDs().count == 16_384)
    }
}
