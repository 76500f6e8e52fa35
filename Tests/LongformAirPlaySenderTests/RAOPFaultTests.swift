import Foundation
import LongformTestSupport
import Testing

/// Receivers that refuse, talk nonsense or drop off the network, in a group with one that plays:
/// each is named with what went wrong, and the rest of the group plays on.
@Suite(.serialized, .enabled(if: AirPlayReceiver.isAvailable, "needs root, ip, shairport-sync, avahi-daemon and dbus-daemon"))
struct RAOPFaultTests {
    @Test func aReceiverThatRefusesOrAnswersGarbageIsNamedAndTheOthersPlayOn() throws {
        let receiver = try AirPlayReceiver(name: "Kitchen", ignoresVolume: true)
        let busy = try HostileRTSPReceiver(.refusesAnnounce)
        let broken = try HostileRTSPReceiver(.answersGarbage)
        let sine = try RAOPSessionTests.sine(seconds: 3)
        let route = "airplay:\(receiver.address):\(receiver.port),127.0.0.1:\(busy.port),127.0.0.1:\(broken.port)"
        let play = try RAOPSessionTests.play([sine], to: route)
        #expect(play.status == 0, "\(play.errorOutput)")
        Thread.sleep(forTimeInterval: 0.5)
        let heard = RAOPSessionTests.levels(receiver.readOutput()[...])
        #expect(heard.count >= 25 && heard.allSatisfy { abs($0 - 16_384) <= 2 }, "the receiver that works played \(heard); \(play.errorOutput)")
        #expect(play.errorOutput.contains("airplay:127.0.0.1:\(busy.port): ANNOUNCE answered 453 Not Enough Bandwidth"), "\(play.errorOutput)")
        #expect(play.errorOutput.contains("airplay:127.0.0.1:\(broken.port): ANNOUNCE:"), "\(play.errorOutput)")
        // Each was tried again, as a lost receiver is.
        #expect(busy.methods.filter { $0 == "ANNOUNCE" }.count >= 2, "\(busy.methods)")
    }

    @Test func aReceiverCutOffTheNetworkComesBackAtTheFrameOfTheTimeAndTheOtherPlaysOn() throws {
        let steady = try AirPlayReceiver(name: "Steady", ignoresVolume: true)
        let cut = try AirPlayReceiver(name: "Porch", ignoresVolume: true)
        let music = TestAudio.path("airplay-cut-music-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try RampAudio.file(named: "airplay-ramp-16s", seconds: 16), toPath: music + "/ramp.wav")
        let serve = try ServeProcess(state: TestAudio.path("airplay-cut-serve-\(UUID().uuidString.prefix(8))"), music: music,
                                     route: "airplay:\(steady.address):\(steady.port),\(cut.address):\(cut.port)")
        defer { serve.kill() }
        let client = HTTPTestClient(port: serve.port, token: serve.token)
        func state() throws -> [String: Any] { try client.get("/api/state").json }
        func offset() throws -> Double { (try state()["offset"] as? NSNumber)?.doubleValue ?? -1 }
        func waitFor(_ condition: () throws -> Bool) throws {
            let deadline = Date().addingTimeInterval(30)
            while try !condition() && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "ramp.wav"}]}"#).status == 201)
        #expect(try client.post("/api/transport/play").status == 204)
        try waitFor { try offset() > 2 }
        try cut.namespace.cut()
        // Longer than the 3 s between keep-alives and the 5 s an answer is waited for: the
        // connection is given up for lost and opened again once the link is back.
        Thread.sleep(forTimeInterval: 9)
        try cut.namespace.restore()
        let restoredAt = try offset()
        try waitFor { try state()["playbackState"] as? String == "stopped" }
        Thread.sleep(forTimeInterval: 0.5)

        let last = 16 * 44_100 - 1
        let steadyPlayed = RampAudio.played(left: RAOPCommandTests.left(of: steady.readOutput())).splitAtJumps()
        #expect(steadyPlayed.pieces.count == 1 && steadyPlayed.pieces.first?.count == last - 1, "the other receiver played on whole: \(steadyPlayed)")
        let cutPlayed = RampAudio.played(left: RAOPCommandTests.left(of: cut.readOutput())).splitAtJumps()
        // What it played after the cut: from a frame within 3 s of the link's return to the ramp's end.
        let back = try #require(cutPlayed.pieces.last, "\(cutPlayed)")
        let firstFrame = last - back.count
        #expect(cutPlayed.pieces.count >= 2 && back.isContinuous(tolerance: 0), "\(cutPlayed)")
        #expect(Double(firstFrame) / 44_100 >= restoredAt - 0.5 && Double(firstFrame) / 44_100 <= restoredAt + 3,
                "back from frame \(firstFrame) (\(Double(firstFrame) / 44_100) s), the link back at \(restoredAt) s: \(cutPlayed)")
        #expect(RampAudio.distance(from: back.last, to: Int32(RampAudio.value(ofFrame: Int64(last))), frames: RampAudio.ringingFrames) == 0, "\(cutPlayed)")
        #expect(serve.output.contains("airplay:\(cut.address):\(cut.port)"), "the log names the receiver cut off: \(serve.output.suffix(2000))")
    }
}
