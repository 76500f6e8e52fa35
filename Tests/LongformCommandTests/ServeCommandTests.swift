import Foundation
import LongformTestSupport
import Testing

/// `longform serve` as a process: it prints where it listens, and killed while playing it comes
/// back with the same playlist, item and offset.
@Suite struct ServeCommandTests {
    static func musicDirectory() throws -> String {
        let directory = TestAudio.path("serve-music-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let reference = try TestAudio.reference("serve-long", seconds: 8, startFrequency: 250)
        for name in ["a", "b", "c"] { try FileManager.default.copyItem(atPath: reference, toPath: "\(directory)/\(name).wav") }
        return directory
    }

    @Test func killedWhilePlayingItComesBackWithTheSamePlaylistItemAndOffset() throws {
        let music = try Self.musicDirectory()
        let state = TestAudio.path("serve-restart-\(UUID().uuidString.prefix(8))")
        let first = try ServeProcess(state: state, music: music)
        let client = HTTPTestClient(port: first.port)
        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "a.wav"}, {"path": "b.wav"}, {"path": "c.wav"}]}"#).status == 201)
        #expect(try client.put("/api/volume", json: #"{"volume": 0.4}"#).status == 200)
        let ids = (try client.get("/api/playlist").json["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(try client.post("/api/transport/seek", json: #"{"offset": 2.0, "id": "\#(ids[1])"}"#).status == 204)
        Thread.sleep(forTimeInterval: 2.5)
        let before = try client.get("/api/state").json
        let offsetBefore = (before["offset"] as? NSNumber)?.doubleValue ?? 0
        #expect(before["currentId"] as? String == ids[1] && offsetBefore > 3.5, "\(before)")
        first.kill(SIGKILL)

        let second = try ServeProcess(state: state, music: music)
        defer { second.kill(SIGTERM) }
        let after = try HTTPTestClient(port: second.port).get("/api/state").json
        let offsetAfter = (after["offset"] as? NSNumber)?.doubleValue ?? 0
        #expect((after["playlist"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } == ids)
        #expect(after["currentId"] as? String == ids[1] && after["playbackState"] as? String == "playing", "\(after)")
        // The position is saved every second while playing: at most that much is lost.
        #expect(offsetAfter > offsetBefore - 1.3 && offsetAfter < offsetBefore + 0.5, "killed at \(offsetBefore) s, resumed at \(offsetAfter) s")
        #expect((after["volume"] as? NSNumber)?.doubleValue == 0.4)
    }

    @Test func aStopSignalSavesAndEndsCleanlyWithClientsConnected() throws {
        let music = try Self.musicDirectory()
        let state = TestAudio.path("serve-term-\(UUID().uuidString.prefix(8))")
        let server = try ServeProcess(state: state, music: music)
        let client = HTTPTestClient(port: server.port)
        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "a.wav"}]}"#).status == 201)
        let events = try client.openEventStream()
        #expect(events.next(named: "state") != nil)
        server.kill(SIGTERM)
        #expect(server.process.terminationStatus == 0, "\(server.output)")
        // Events sent before the stop may still be read; then the stream ends (not a timeout).
        var waited = 0.0
        for _ in 0..<20 {
            let asked = Date()
            if events.nextEvent(timeout: 3) == nil { waited = Date().timeIntervalSince(asked); break }
        }
        #expect(waited < 1, "the event stream ended with the server")
        let again = try ServeProcess(state: state, music: music)
        defer { again.kill(SIGTERM) }
        #expect((try HTTPTestClient(port: again.port).get("/api/playlist").json["items"] as? [[String: Any]])?.count == 1)
    }

    @Test func startedWithOtherMusicDirectoriesTheOldLibraryCannotBePlayed() throws {
        let state = TestAudio.path("serve-moved-\(UUID().uuidString.prefix(8))")
        let first = try ServeProcess(state: state, music: try Self.musicDirectory())
        let client = HTTPTestClient(port: first.port)
        var tracks: [[String: Any]] = []
        for _ in 0..<100 where tracks.count < 3 {
            tracks = try client.get("/api/library").json["tracks"] as? [[String: Any]] ?? []
            Thread.sleep(forTimeInterval: 0.1)
        }
        let id = try #require(tracks.first?["id"] as? Int)
        first.kill(SIGTERM)

        let empty = TestAudio.path("serve-empty-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let second = try ServeProcess(state: state, music: empty)
        defer { second.kill(SIGTERM) }
        let again = HTTPTestClient(port: second.port)
        #expect(try again.post("/api/playlist/items", json: #"{"items": [{"libraryId": \#(id)}]}"#).status == 404)
        var total = -1
        for _ in 0..<100 where total != 0 {
            total = try again.get("/api/library").json["total"] as? Int ?? -1
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(total == 0, "the old directory's tracks are gone from the library")
    }

    @Test func badArgumentsAreNamed() throws {
        let result = try ExternalTool.run(ExternalTool.longformExecutable, ["serve", "--http", "localhost", "--state", TestAudio.path("serve-bad")])
        #expect(result.status != 0 && result.errorOutput.contains("--http localhost"), "\(result.errorOutput)")
        let missing = try ExternalTool.run(ExternalTool.longformExecutable, ["serve", "--http", "127.0.0.1:0", "--state", TestAudio.path("serve-bad"), "--music", "/nonexistent/music"])
        #expect(missing.status != 0 && missing.errorOutput.contains("/nonexistent/music is not a directory"), "\(missing.errorOutput)")
    }
}
