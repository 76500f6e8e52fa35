import Foundation
import LongformTestSupport
import Testing

/// The library: scanned at start, searched, rescanned on request and when files change.
@Suite struct LibraryAPITests {
    @Test func theLibraryIsSearchedAndFollowsTheMusicDirectory() throws {
        let running = try RunningServer("library")
        let client = running.client
        let ids = try running.libraryIDs()
        #expect(Set(ids.keys) == ["One", "two.flac", "Cover"], "\(ids)")

        let search = try client.get("/api/library?search=ann").json
        #expect(search["total"] as? Int == 1 && (search["tracks"] as? [[String: Any]])?.first?["artist"] as? String == "Ann", "\(search)")
        #expect(try client.get("/api/library?search=%25").json["total"] as? Int == 0, "a % in the search is a literal")
        let page = try client.get("/api/library?limit=2&offset=1").json
        #expect((page["tracks"] as? [[String: Any]])?.count == 2 && page["total"] as? Int == 3)
        #expect(try client.get("/api/library?limit=0").status == 400)
        #expect(try client.get("/api/library?offset=-3").status == 400)

        let cover = try client.get("/api/library/\(try #require(ids["Cover"]))")
        #expect(cover.status == 200 && cover.json["hasArtwork"] as? Bool == true)
        #expect(try client.get("/api/library/\(try #require(ids["Cover"]))/artwork").body == (try RunningServer.coverBytes()))
        #expect(try client.get("/api/library/\(try #require(ids["One"]))/artwork").status == 404)
        #expect(try client.get("/api/library/424242").status == 404)
        #expect(try client.get("/api/library/abc").status == 404)

        // A file copied in is found without asking, and announced.
        let events = try client.openEventStream()
        defer { events.close() }
        _ = events.next(named: "state")
        try FileManager.default.createDirectory(atPath: running.musicDirectory + "/new", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: running.musicDirectory + "/album/one.flac", toPath: running.musicDirectory + "/new/three.flac")
        let announced = try #require(events.next(named: "library", timeout: 10))
        #expect(announced["added"] as? Int == 1)
        #expect(try client.get("/api/library").json["total"] as? Int == 4)

        // And one removed.
        try FileManager.default.removeItem(atPath: running.musicDirectory + "/album/two.flac")
        let removed = try #require(events.next(named: "library", timeout: 10))
        #expect(removed["removed"] as? Int == 1)
        #expect(try client.get("/api/library").json["total"] as? Int == 3)
    }

    @Test func withoutWatchingTheLibraryChangesOnlyWhenARescanIsAsked() throws {
        let running = try RunningServer("rescan", isWatching: false)
        let client = running.client
        #expect(try running.libraryIDs().count == 3)
        try FileManager.default.copyItem(atPath: running.musicDirectory + "/album/one.flac", toPath: running.musicDirectory + "/four.flac")
        try FileManager.default.removeItem(atPath: running.musicDirectory + "/album/two.flac")
        Thread.sleep(forTimeInterval: 1.5)
        #expect(try client.get("/api/library").json["total"] as? Int == 3)
        let rescan = try client.post("/api/library/rescan")
        #expect(rescan.status == 200 && rescan.json["added"] as? Int == 1 && rescan.json["removed"] as? Int == 1, "\(rescan)")
        let paths = (try client.get("/api/library").json["tracks"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(paths.contains(running.musicDirectory + "/four.flac") && !paths.contains(running.musicDirectory + "/album/two.flac"))
    }
}
