import Foundation
import LongformTestSupport
import Testing

/// Two shairport-sync receivers on one `airplay:` route, each playing to a room of one PulseAudio
/// sample clock (`PulseAudioRooms`, its `pa` backend): the rooms' monitor shows how far apart the
/// two play each frame of a ramp.
@Suite(.serialized, .enabled(if: AirPlayReceiver.isAvailable, "needs root, ip, shairport-sync, avahi-daemon and dbus-daemon"))
struct RAOPReceiversInStepTests {
    @Test func twoReceiversPlayTheRampWithinAMillisecondOfEachOther() throws {
        let server = try PulseAudioServer.start()
        let rooms = try PulseAudioRooms(server: server, names: ["a", "b"])
        let receivers = try ["a", "b"].map { name in
            try AirPlayReceiver(name: "Room \(name)", output: .pulseAudio(server: server, sink: rooms.room(name)), ignoresVolume: true)
        }
        let seconds = 12.0
        let ramp = try RampAudio.file(named: "airplay-rooms-ramp-12s", seconds: seconds)
        let monitor = try MonitorRecording(server: server, source: rooms.sink + ".monitor", channelCount: 6, channelMap: rooms.channelMap)
        let route = "airplay:" + receivers.map { "\($0.address):\($0.port)" }.joined(separator: ",")
        let play = try ExternalTool.run(ExternalTool.longformExecutable, ["play", "--state", TestAudio.path("airplay-state-\(UUID().uuidString.prefix(8))"),
                                                                         "--route", route, ramp], timeLimit: 120)
        #expect(play.status == 0, "\(play.errorOutput)")
        Thread.sleep(forTimeInterval: 1)
        // The third room of the six channels is silent.
        let windows = PulseAudioRooms.phases(of: monitor.finish(covering: 0), roomCount: 3)
        let offsets = windows.compactMap { row -> Int? in
            guard let a = row[0], let b = row[1] else { return nil }
            return PulseAudioRooms.centered(b - a)
        }
        let sorted = offsets.map(abs).sorted()
        let logs = receivers.map { String($0.logText.suffix(1500)) }
        // Both play nearly all of the ramp's windows together, half of them within 1 ms (44 frames).
        #expect(offsets.count >= Int(seconds * 10) - 20, "the rooms played together in \(offsets.count) windows: \(windows.prefix(30)); \(logs)")
        #expect(!sorted.isEmpty && sorted[sorted.count / 2] <= 44, "median offset \(sorted.isEmpty ? -1 : sorted[sorted.count / 2]) frames; b − a per window: \(offsets); \(logs)")
    }
}
