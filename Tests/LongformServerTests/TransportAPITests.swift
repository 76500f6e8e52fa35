import Foundation
import LongformTestSupport
import Testing

/// Transport, volume, routes and now playing over real HTTP, checked through the state the server
/// reports and the events a client receives.
@Suite struct TransportAPITests {
    private func offset(_ state: [String: Any]) -> Double { (state["offset"] as? NSNumber)?.doubleValue ?? -1 }

    @Test func playPauseSeekNextPreviousAndStopDoWhatTheySay() throws {
        let running = try RunningServer("transport")
        let client = running.client
        #expect(try client.post("/api/transport/play").status == 409)
        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "album/one.flac"}, {"path": "album/two.flac"}, {"path": "cover.mp3"}]}"#).status == 201)
        let ids = try running.playlistIDs()
        #expect(try client.post("/api/transport/seek", json: #"{"offset": 1}"#).status == 409)

        let events = try client.openEventStream()
        defer { events.close() }
        _ = events.next(named: "state")
        #expect(try client.post("/api/transport/play").status == 204)
        var state = try running.waitForState { offset($0) > 0.3 }
        #expect(state["playbackState"] as? String == "playing" && state["currentId"] as? String == ids[0], "\(state)")
        // Offsets arrive at least four times a second while playing.
        let started = Date()
        var offsets = 0
        while Date().timeIntervalSince(started) < 1.0, events.next(named: "offset", timeout: 1) != nil { offsets += 1 }
        #expect(offsets >= 4, "\(offsets) offset events in a second")

        #expect(try client.post("/api/transport/pause").status == 204)
        state = try running.waitForState { ($0["rate"] as? NSNumber)?.doubleValue == 0 }
        let held = offset(state)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(abs(offset(try client.get("/api/state").json) - held) < 0.01, "the offset stays while paused")

        #expect(try client.post("/api/transport/seek", json: #"{"offset": 2.0}"#).status == 204)
        state = try running.waitForState { abs(offset($0) - 2.0) < 0.05 }
        #expect(abs(offset(state) - 2.0) < 0.05, "\(state)")
        #expect(try client.post("/api/transport/seek", json: #"{"offset": 1.5, "id": "\#(ids[2])"}"#).status == 204)
        state = try running.waitForState { $0["currentId"] as? String == ids[2] }
        #expect(abs(offset(state) - 1.5) < 0.05, "\(state)")
        #expect(try client.post("/api/transport/previous").status == 204)
        state = try running.waitForState { $0["currentId"] as? String == ids[1] }
        #expect(state["currentId"] as? String == ids[1])
        #expect(try client.post("/api/transport/next").status == 204)
        state = try running.waitForState { $0["currentId"] as? String == ids[2] }
        #expect(state["currentId"] as? String == ids[2])
        #expect(try client.post("/api/transport/play", json: #"{"id": "\#(ids[0])"}"#).status == 204)
        state = try running.waitForState { $0["currentId"] as? String == ids[0] && $0["playbackState"] as? String == "playing" }
        #expect(state["playbackState"] as? String == "playing")

        for (body, says) in [(#"{"offset": -1}"#, "not a time"), (#"{"offset": 99}"#, "past the end"), (#"{"offset": "x"}"#, "offset should be a number"),
                             (#"{"offset": 1, "id": "7A0C6E55-0000-0000-0000-000000000000"}"#, "no playlist item")] {
            let response = try client.post("/api/transport/seek", json: body)
            #expect(response.status / 100 == 4 && (response.json["error"] as? String)?.contains(says) == true, "\(body): \(response)")
        }
        #expect(try client.post("/api/transport/stop").status == 204)
        state = try running.waitForState { $0["playbackState"] as? String == "stopped" }
        #expect(state["playbackState"] as? String == "stopped" && state["currentId"] == nil)
        #expect(try client.post("/api/transport/next").status == 409)
    }

    @Test func afterAClearPlayStartsAtTheFirstItemAndAFailingLastItemStops() throws {
        let running = try RunningServer("clear-play")
        let client = running.client
        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "album/one.flac"}, {"path": "album/two.flac"}, {"path": "cover.mp3"}]}"#).status == 201)
        var ids = try running.playlistIDs()
        #expect(try client.post("/api/transport/play", json: #"{"id": "\#(ids[2])"}"#).status == 204)
        try running.waitForState { $0["currentId"] as? String == ids[2] }
        #expect(try client.delete("/api/playlist").status == 204)
        try running.waitForState { $0["playbackState"] as? String == "stopped" }
        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "cover.mp3"}, {"path": "album/two.flac"}, {"path": "album/one.flac"}]}"#).status == 201)
        ids = try running.playlistIDs()
        #expect(try client.post("/api/transport/play").status == 204)
        var state = try running.waitForState { $0["playbackState"] as? String == "playing" }
        #expect(state["currentId"] as? String == ids[0] && (state["currentIndex"] as? NSNumber)?.intValue == 0, "after a clear, play starts at the first item: \(state)")

        // A last item that fails (its file removed after it was added): playing it stops, as the playlist's end does.
        let doomed = running.musicDirectory + "/album/gone.flac"
        try FileManager.default.copyItem(atPath: running.musicDirectory + "/album/two.flac", toPath: doomed)
        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "album/gone.flac"}]}"#).status == 201)
        try FileManager.default.removeItem(atPath: doomed)
        ids = try running.playlistIDs()
        #expect(try client.post("/api/transport/play", json: #"{"id": "\#(ids[3])"}"#).status == 204)
        state = try running.waitForState { $0["playbackState"] as? String == "stopped" }
        Thread.sleep(forTimeInterval: 0.3)
        state = try client.get("/api/state").json
        #expect(state["playbackState"] as? String == "stopped" && state["currentId"] == nil, "no wrap to the first item: \(state)")
    }

    @Test func volumeAndMuteAreSetReportedAndRefusedOutOfRange() throws {
        let running = try RunningServer("volume")
        let client = running.client
        let events = try client.openEventStream()
        defer { events.close() }
        _ = events.next(named: "state")
        let set = try client.put("/api/volume", json: #"{"volume": 0.25, "isMuted": true}"#)
        #expect(set.status == 200 && (set.json["volume"] as? NSNumber)?.doubleValue == 0.25 && set.json["isMuted"] as? Bool == true, "\(set)")
        let event = try #require(events.next(named: "volume"))
        #expect((event["volume"] as? NSNumber)?.doubleValue == 0.25)
        for (body, says) in [(#"{"volume": 1.5}"#, "outside 0...1"), (#"{"volume": -0.1}"#, "outside 0...1"), (#"{"volume": "loud"}"#, "volume should be a number"),
                             (#"{"volume": null}"#, "volume should be a number, not null"), (#"{"isMuted": null}"#, "isMuted should be true or false, not null"),
                             (#"{"volume": 1e400}"#, "malformed request body")] {
            let response = try client.put("/api/volume", json: body)
            #expect(response.status == 400 && (response.json["error"] as? String)?.contains(says) == true, "\(body): \(response.text)")
        }
        // A number too small for a Float is still a number: a volume of 0.
        let tiny = try client.put("/api/volume", json: #"{"volume": 1e-50}"#)
        #expect(tiny.status == 200 && (tiny.json["volume"] as? NSNumber)?.doubleValue == 0, "\(tiny.text)")
        #expect(try client.put("/api/volume", json: #"{"volume": 0.25}"#).status == 200)
        let state = try client.get("/api/state").json
        #expect((state["volume"] as? NSNumber)?.doubleValue == 0.25 && state["isMuted"] as? Bool == true)
    }

    @Test func theRoutePickerListsThisMachinesRoutesAndSwitchesToPulseAudio() throws {
        let running = try RunningServer("routes")
        let client = running.client
        let routes = try client.get("/api/routes").json
        let ids = (routes["routes"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(routes["current"] as? String == "null")
        #expect(ids.contains("null") && ids.contains("pulse:\(PulseAudioServer.sharedSinkName)"), "\(ids)")
        #expect(!ids.contains { $0.hasPrefix("wav") })
        #expect(try client.put("/api/route", json: #"{"route": "wav:/tmp/anything.wav"}"#).status == 404)
        #expect(try client.put("/api/route", json: #"{"route": "speakers"}"#).status == 400)

        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "album/one.flac"}]}"#).status == 201)
        #expect(try client.post("/api/transport/play").status == 204)
        try running.waitForState { ($0["offset"] as? NSNumber)?.doubleValue ?? 0 > 0.2 }
        let switched = try client.put("/api/route", json: #"{"route": "pulse:\#(PulseAudioServer.sharedSinkName)"}"#)
        #expect(switched.status == 200 && switched.json["current"] as? String == "pulse:\(PulseAudioServer.sharedSinkName)", "\(switched)")
        // The PulseAudio server now has our stream playing into its sink.
        let server = try PulseAudioServer.start()
        var inputs = ""
        for _ in 0..<50 where !inputs.contains("longform") {
            inputs = try ExternalTool.run("pactl", ["--server", server, "list", "sink-inputs"]).output.lowercased()
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(inputs.contains("longform"), "\(inputs)")
        // The timeline follows the PulseAudio stream's clock now: it moves only while the server plays it.
        let atSwitch = offset(try client.get("/api/state").json)
        let state = try running.waitForState { offset($0) > atSwitch + 0.5 }
        #expect(offset(state) > atSwitch + 0.5, "\(state)")
        #expect(state["playbackState"] as? String == "playing" && state["route"] as? String == "pulse:\(PulseAudioServer.sharedSinkName)")
    }

    @Test func nowPlayingCarriesTagsAndArtwork() throws {
        let running = try RunningServer("now-playing")
        let client = running.client
        #expect(try client.get("/api/now-playing/artwork").status == 404)
        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "cover.mp3"}]}"#).status == 201)
        #expect(try client.post("/api/transport/play").status == 204)
        try running.waitForState { $0["playbackState"] as? String == "playing" }
        let now = try client.get("/api/now-playing").json
        let item = try #require(now["item"] as? [String: Any])
        #expect(item["title"] as? String == "Cover" && now["hasArtwork"] as? Bool == true, "\(now)")
        let artwork = try client.get(try #require(now["artworkURL"] as? String))
        #expect(artwork.status == 200 && artwork.headers["content-type"] == "image/png")
        #expect(artwork.body == (try RunningServer.coverBytes()))
    }
}
