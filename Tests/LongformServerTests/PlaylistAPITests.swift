import Foundation
import LongformTestSupport
import Testing

/// The playlist endpoints over real HTTP: what they change, and that every refusal names the
/// culprit with a 4xx and changes nothing.
@Suite struct PlaylistAPITests {
    @Test func itemsAreAddedByPathURLAndLibraryIDAndKeepTheirIDs() throws {
        let running = try RunningServer("add")
        let client = running.client
        let library = try running.libraryIDs()
        let coverID = try #require(library["Cover"])

        let added = try client.post("/api/playlist/items", json: """
            {"items": [{"path": "album/one.flac"}, {"url": "http://127.0.0.1:9/stream.mp3"}, {"libraryId": \(coverID)}]}
            """)
        #expect(added.status == 201, "\(added)")
        let items = try #require(added.json["items"] as? [[String: Any]])
        #expect(items.count == 3)
        #expect(items[0]["location"] as? String == running.musicDirectory + "/album/one.flac")
        #expect(items[2]["title"] as? String == "Cover")

        // Inserted at an index, between the others.
        let inserted = try client.post("/api/playlist/items", json: #"{"items": [{"path": "\#(running.musicDirectory)/album/two.flac"}], "index": 1}"#)
        #expect(inserted.status == 201, "\(inserted)")
        let ids = try running.playlistIDs()
        #expect(ids.count == 4)
        #expect(ids[0] == items[0]["id"] as? String && ids[2] == items[1]["id"] as? String && ids[3] == items[2]["id"] as? String)

        // Moved and removed by id; the ids stay.
        #expect(try client.post("/api/playlist/items/\(ids[3])/move", json: #"{"index": 0}"#).status == 204)
        #expect(try running.playlistIDs() == [ids[3], ids[0], ids[1], ids[2]])
        #expect(try client.delete("/api/playlist/items/\(ids[1])").status == 204)
        #expect(try running.playlistIDs() == [ids[3], ids[0], ids[2]])
        #expect(try client.delete("/api/playlist").status == 204)
        #expect(try running.playlistIDs() == [])
    }

    @Test func badRequestsAreRefusedByNameAndChangeNothing() throws {
        let running = try RunningServer("refusals")
        let client = running.client
        _ = try running.libraryIDs()
        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "album/one.flac"}, {"path": "album/two.flac"}]}"#).status == 201)
        // Once the tags are read (in the background), the playlist stays as it is.
        let deadline = Date().addingTimeInterval(5)
        while (try client.get("/api/playlist").json["items"] as? [[String: Any]] ?? []).contains(where: { $0["duration"] == nil }), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let before = try client.get("/api/playlist").text
        let firstID = try running.playlistIDs()[0]

        // A file outside the music directory, reached by a symlink inside it.
        try FileManager.default.createSymbolicLink(atPath: running.musicDirectory + "/escape.flac", withDestinationPath: "/etc/passwd")
        let outside = TestAudio.path("outside-\(UUID().uuidString.prefix(6)).flac")
        try FileManager.default.copyItem(atPath: running.musicDirectory + "/album/one.flac", toPath: outside)

        let cases: [(method: String, path: String, body: String?, headers: [String: String], status: Int, says: String)] = [
            ("POST", "/api/playlist/items", "{\"items\": [", [:], 400, "not JSON"),
            ("POST", "/api/playlist/items", #"{"things": []}"#, [:], 400, "items is missing"),
            ("POST", "/api/playlist/items", #"{"items": [{"path": 7}]}"#, [:], 400, "items[0].path should be a string"),
            ("POST", "/api/playlist/items", #"{"items": []}"#, [:], 400, "no items"),
            ("POST", "/api/playlist/items", #"{"items": [{"path": "album/one.flac", "url": "http://x/y"}]}"#, [:], 400, "exactly one"),
            ("POST", "/api/playlist/items", #"{"items": [{"path": "../../../../etc/passwd"}]}"#, [:], 403, "outside the music directories"),
            ("POST", "/api/playlist/items", #"{"items": [{"path": "/etc/passwd"}]}"#, [:], 403, "/etc/passwd is outside"),
            ("POST", "/api/playlist/items", #"{"items": [{"path": "escape.flac"}]}"#, [:], 403, "escape.flac is outside"),
            ("POST", "/api/playlist/items", #"{"items": [{"path": "\#(outside)"}]}"#, [:], 403, "outside the music directories"),
            ("POST", "/api/playlist/items", #"{"items": [{"path": "album/missing.flac"}]}"#, [:], 404, "album/missing.flac: no such file"),
            ("POST", "/api/playlist/items", #"{"items": [{"url": "file:///etc/passwd"}]}"#, [:], 400, "only http and https"),
            ("POST", "/api/playlist/items", #"{"items": [{"url": "ftp://example.org/a.mp3"}]}"#, [:], 400, "only http and https"),
            ("POST", "/api/playlist/items", #"{"items": [{"libraryId": 99999}]}"#, [:], 404, "no library track has id 99999"),
            // The good item is not added either: all or nothing.
            ("POST", "/api/playlist/items", #"{"items": [{"path": "album/one.flac"}, {"path": "/etc/passwd"}]}"#, [:], 403, "outside"),
            ("POST", "/api/playlist/items", #"{"items": [{"path": "album/one.flac"}], "index": 3}"#, [:], 400, "index 3 is outside the playlist (2 items)"),
            ("POST", "/api/playlist/items", #"{"items": [{"path": "album/one.flac"}], "index": -1}"#, [:], 400, "index -1 is outside"),
            ("POST", "/api/playlist/items", #"{"items": [{"path": "album/one.flac"}]}"#, ["Content-Type": "text/plain"], 415, "Content-Type: application/json"),
            ("POST", "/api/playlist/items", "{\"items\": [" + String(repeating: #"{"path": "album/one.flac"},"#, count: 10_000) + "]}", [:], 413, "the request body is over 262144 bytes"),
            ("DELETE", "/api/playlist/items/0D1B0A63-7B1C-4A4E-9F55-0123456789AB", nil, [:], 404, "no playlist item has id 0D1B0A63"),
            ("DELETE", "/api/playlist/items/nonsense", nil, [:], 404, "no playlist item has id nonsense"),
            ("POST", "/api/playlist/items/\(firstID)/move", #"{"index": 2}"#, [:], 400, "index 2 is outside the playlist (2 items)"),
            ("POST", "/api/playlist/items/\(firstID)/move", #"{"position": 1}"#, [:], 400, "index is missing"),
            ("POST", "/api/playlist/items/0D1B0A63-7B1C-4A4E-9F55-0123456789AB/move", #"{"index": 0}"#, [:], 404, "no playlist item"),
            ("GET", "/api/nothing-here", nil, [:], 404, "no such resource: /api/nothing-here"),
            // A path that exists for other methods: 405, naming them.
            ("PUT", "/api/playlist", #"{"items": []}"#, [:], 405, "PUT is not allowed on /api/playlist; use DELETE, GET, HEAD"),
            ("PATCH", "/api/playlist/items/\(firstID)", nil, [:], 405, "use DELETE"),
            ("GET", "/api/transport/play", nil, [:], 405, "use POST"),
            // A literal segment wins over a parameter, as in the router: not /api/library/{trackId}'s GET.
            ("OPTIONS", "/api/library/rescan", nil, [:], 405, "/api/library/rescan; use POST"),
        ]
        for test in cases {
            let response = try client.request(test.method, test.path, json: test.body, headers: test.headers)
            #expect(response.status == test.status, "\(test.method) \(test.path) \(test.body?.prefix(80) ?? ""): \(response)")
            #expect((response.json["error"] as? String)?.contains(test.says) == true, "\(test.path) \(test.body?.prefix(80) ?? ""): \(response.text)")
            if test.status == 405 { #expect(response.headers["allow"]?.isEmpty == false, "\(test.path): \(response.headers)") }
        }
        // HEAD is answered wherever GET is, without a body.
        let head = try client.request("HEAD", "/api/playlist")
        #expect(head.status == 200 && head.body.isEmpty, "\(head)")
        let after = try client.get("/api/playlist").text
        #expect(after == before, "before: \(before)\nafter: \(after)")
    }

    @Test func twoClientsEditingAtOnceBothLandAndBothSeeTheSameEvents() throws {
        let running = try RunningServer("two-clients")
        let first = running.client
        let second = HTTPTestClient(port: running.port)
        let firstEvents = try first.openEventStream()
        let secondEvents = try second.openEventStream()
        defer { firstEvents.close(); secondEvents.close() }
        #expect(firstEvents.status == 200 && firstEvents.headers["content-type"]?.hasPrefix("text/event-stream") == true)
        #expect(firstEvents.next(named: "state") != nil && secondEvents.next(named: "state") != nil)

        // Twenty adds from each client, at the same time.
        DispatchQueue.concurrentPerform(iterations: 2) { which in
            let client = which == 0 ? first : second
            for _ in 0..<20 { _ = try? client.post("/api/playlist/items", json: #"{"items": [{"path": "album/two.flac"}], "index": 0}"#) }
        }
        let ids = try running.playlistIDs()
        #expect(ids.count == 40 && Set(ids).count == 40)
        // Both streams end on the same playlist: the last playlist event each saw.
        func lastPlaylist(_ stream: EventStream) -> [String] {
            var last: [String] = []
            while let event = stream.next(named: "playlist", timeout: 1) { last = (event["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } }
            return last
        }
        #expect(lastPlaylist(firstEvents) == ids)
        #expect(lastPlaylist(secondEvents) == ids)
    }
}
