import Foundation
import LongformTestSupport
import Testing

/// `serve` with a URL whose server stalls: the player's commands stay quick throughout, the item
/// fails with its reason once its retry stalls too, and the next item plays.
@Suite struct StallingURLTests {
    @Test func aStallingURLNeverHoldsUpCommandsAndTheNextItemPlays() throws {
        let running = try RunningServer("stalling-url")
        let client = running.client
        let mp3 = try TestAudio.encode(try TestAudio.reference("serve-stall", seconds: 4.0, startFrequency: 300), as: "mp3", arguments: ["-c:a", "libmp3lame", "-b:a", "128k"])
        // 20 KB (about a second of it), then nothing for 40 s on every connection.
        let url = try HTTPFileServer.start() + "stall/20480/40/" + (mp3 as NSString).lastPathComponent
        let events = try client.openEventStream()
        defer { events.close() }
        _ = events.next(named: "state")
        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"url": "\#(url)"}, {"path": "album/one.flac"}]}"#).status == 201)
        let ids = try running.playlistIDs()
        #expect(try client.post("/api/transport/play").status == 204)

        // Throughout the stall (5 s, then 5 s more after connecting again), a command is answered at once.
        var slowest = 0.0
        let stallEnds = Date().addingTimeInterval(8)
        while Date() < stallEnds {
            let asked = Date()
            #expect(try client.get("/api/state").status == 200)
            slowest = max(slowest, Date().timeIntervalSince(asked))
            Thread.sleep(forTimeInterval: 0.2)
        }
        #expect(slowest < 0.5, "a state request took \(slowest) s during the stall")

        let failed = try #require(events.next(named: "itemFailed", timeout: 20))
        #expect(failed["id"] as? String == ids[0] && (failed["error"] as? String)?.contains("stalled") == true, "\(failed)")
        var current: [String: Any]?
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, let event = events.next(named: "currentItem", timeout: 1) {
            if event["id"] as? String == ids[1] { current = event; break }
        }
        #expect(current != nil, "the next item was never announced")
        let state = try running.waitForState { ($0["offset"] as? NSNumber)?.doubleValue ?? 0 > 0.3 && $0["currentId"] as? String == ids[1] }
        #expect(state["playbackState"] as? String == "playing" && state["currentId"] as? String == ids[1], "\(state)")
    }
}
