import LongformSpeakerSender
import LongformPlayer
import LongformRendering
import LongformRoutes
import Testing

/// The engine's own rules, on real routes that play nothing audible: where the volume goes, and
/// what a route switch carries over or, when it fails, leaves as it was. (What is heard at each
/// volume is in `SpeakerRouteTests` and the server's transport tests.)
@Suite struct PlaybackEngineTests {
    /// A group of two speakers that are never connected: its volumes are kept, not sent.
    static func speakers() -> SpeakerRoute {
        SpeakerRoute(endpoints: [SpeakerEndpoint(parsing: "127.0.0.1:1")!, SpeakerEndpoint(parsing: "127.0.0.1:2")!])
    }

    @Test func theVolumeIsTheRenderersGainOnARouteAndTheGroupsOnSpeakers() {
        let plain = PlaybackEngine(route: NullRoute(), volume: 0.4, isMuted: true)
        #expect(plain.renderer.volume == 0.4 && plain.renderer.isMuted)
        #expect(plain.groupRoute == nil)

        let group = Self.speakers()
        let engine = PlaybackEngine(route: group, volume: 0.4)
        #expect(engine.renderer.volume == 1 && !engine.renderer.isMuted, "a gain in the renderer would be heard minutes late")
        #expect(group.volume(ofMember: nil) == 0.4)
        engine.setVolume(0.7, isMuted: true)
        #expect(group.volume(ofMember: nil) == 0 && engine.renderer.volume == 1, "muted: the group plays at 0")
        #expect(engine.volume == (0.7, true))
        engine.setVolume(0.7, isMuted: false)
        #expect(group.volume(ofMember: nil) == 0.7)

        // Members' own volumes go by name; unnamed members keep theirs.
        engine.groupRoute?.setVolumes(byMemberName: ["127.0.0.1:2": 0.25, "127.0.0.1:9": 0.5])
        #expect(group.volume(ofMember: 0) == 1 && group.volume(ofMember: 1) == 0.25)
        #expect(engine.groupRoute?.memberNames == ["127.0.0.1:1", "127.0.0.1:2"])
    }

    @Test func aRouteSwitchCarriesTheVolumeAndAFailedOneChangesNothing() throws {
        let null = NullRoute()
        let engine = PlaybackEngine(route: null, volume: 0.3, isMuted: true)
        try engine.start()
        defer { engine.stop() }

        // To speakers: the renderer at full gain, the group muted; and back: the gain again.
        let group = Self.speakers()
        try engine.setRoute(group)
        #expect(engine.route === group && engine.renderer.volume == 1 && !engine.renderer.isMuted && group.volume(ofMember: nil) == 0)
        try engine.setRoute(null)
        #expect(engine.route === null && engine.renderer.volume == 0.3 && engine.renderer.isMuted)

        // A route that cannot start: the engine plays on where it was, at the volume it had.
        let unwritable = WAVFileRoute(path: "/nonexistent/longform/out.wav", pacing: .realTime)
        #expect(throws: RouteError.self) { try engine.setRoute(unwritable) }
        #expect(engine.route === null && engine.renderer.volume == 0.3 && engine.renderer.isMuted)
    }
}
