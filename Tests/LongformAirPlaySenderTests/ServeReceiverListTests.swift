import Foundation
import LongformTestSupport
import Testing

/// `serve` offers the AirPlay receivers its Avahi daemon finds as routes, as they come and go, and
/// plays to one a client picks. Its Avahi is the receiver's, in the receiver's namespace, reached
/// through `DBUS_SYSTEM_BUS_ADDRESS`; a receiver that comes and goes is one `avahi-publish` announces.
@Suite(.serialized, .enabled(if: AirPlayReceiver.isAvailable && FileManager.default.isExecutableFile(atPath: "/usr/bin/avahi-publish"),
                             "needs root, ip, shairport-sync, avahi-daemon, avahi-publish and dbus-daemon"))
struct ServeReceiverListTests {
    static let publish = "/usr/bin/avahi-publish"

    @Test func receiversAreOfferedAsTheyComeAndGoAndOnePickedPlays() throws {
        let receiver = try AirPlayReceiver(name: "Kitchen", ignoresVolume: true)
        _ = try receiver.waitUntilAdvertised()
        let bus = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(try receiver.systemBusSocket())"]
        let music = TestAudio.path("airplay-list-music-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try RampAudio.file(named: "airplay-ramp-3s", seconds: 3), toPath: music + "/ramp.wav")
        let serve = try ServeProcess(state: TestAudio.path("airplay-list-serve-\(UUID().uuidString.prefix(8))"), music: music, environment: bus)
        defer { serve.kill() }
        let client = HTTPTestClient(port: serve.port, token: serve.token)
        func routeIDs() throws -> [String] { ((try client.get("/api/routes").json["routes"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String } }
        func waitFor(_ condition: () throws -> Bool) throws {
            let deadline = Date().addingTimeInterval(15)
            while try !condition() && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        }
        try waitFor { try routeIDs().contains("airplay:Kitchen") }
        let routes = try client.get("/api/routes").json["routes"] as? [[String: Any]] ?? []
        let kitchen = routes.first { $0["id"] as? String == "airplay:Kitchen" }
        #expect((kitchen?["description"] as? String)?.hasPrefix("AirPlay: Kitchen (ShairportSync, \(receiver.address):\(receiver.port)") == true, "\(routes)")

        // One that comes is offered with a `routes` event, and withdrawn with another when it goes.
        let events = try client.openEventStream()
        defer { events.close() }
        let announcer = Process()
        announcer.executableURL = URL(fileURLWithPath: Self.publish)
        announcer.arguments = ["-s", "0A1B2C3D4E5F@Attic", "_raop._tcp", "5002", "am=AirPort10,115", "tp=UDP", "cn=0,1", "et=0,1", "pw=false", "txtvers=1"]
        announcer.environment = ProcessInfo.processInfo.environment.merging(bus) { $1 }
        announcer.standardOutput = FileHandle.nullDevice
        announcer.standardError = FileHandle.nullDevice
        try announcer.run()
        /// The routes of the `routes` events until one satisfies `condition`, for at most 15 s; the last seen.
        func routesEvent(where condition: ([String]) -> Bool) -> [String]? {
            let deadline = Date().addingTimeInterval(15)
            var last: [String]?
            while Date() < deadline, let event = events.next(named: "routes", timeout: deadline.timeIntervalSinceNow) {
                last = (event["routes"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
                if let last, condition(last) { break }
            }
            return last
        }
        let offered = routesEvent { $0.contains("airplay:Attic") }
        #expect(offered?.contains("airplay:Attic") == true, "a routes event offered \(offered ?? [])")
        kill(announcer.processIdentifier, SIGKILL)  // avahi-publish inherits the test's blocked SIGTERM; Avahi drops its entry when the bus connection closes
        announcer.waitUntilExit()
        let withdrawn = routesEvent { !$0.contains("airplay:Attic") }
        #expect(withdrawn.map { !$0.contains("airplay:Attic") && $0.contains("airplay:Kitchen") } == true, "after it went: \(withdrawn ?? [])")

        // Picked, the receiver plays; one nobody announced is refused.
        let picked = try client.put("/api/route", json: #"{"route": "airplay:Kitchen"}"#)
        #expect(picked.status == 200, "\(picked.text)")
        let unknown = try client.put("/api/route", json: #"{"route": "airplay:10.9.9.9"}"#)
        #expect(unknown.status == 404 && unknown.text.contains("airplay:10.9.9.9 is not one of"), "\(unknown.text)")
        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "ramp.wav"}]}"#).status == 201)
        #expect(try client.post("/api/transport/play").status == 204)
        try waitFor { try client.get("/api/state").json["playbackState"] as? String == "stopped" }
        Thread.sleep(forTimeInterval: 1)
        let played = RampAudio.played(left: RAOPCommandTests.left(of: receiver.readOutput())).splitAtJumps()
        #expect(played.pieces.count == 1 && played.pieces.first?.count == 3 * 44_100 - 2, "the picked receiver played \(played); \(serve.output.suffix(2000))")
    }
}
