import LongformRendering
import LongformRoutes
import Testing

@Suite struct RouteSpecifierTests {
    @Test func specifiersParse() throws {
        #expect(try RouteSpecifier(parsing: "null") == .null)
        #expect(try RouteSpecifier(parsing: "wav:/tmp/a.wav") == .wav(path: "/tmp/a.wav"))
        #expect(try RouteSpecifier(parsing: "pulse") == .pulse(sink: nil))
        #expect(try RouteSpecifier(parsing: "pulse:alsa_output.x") == .pulse(sink: "alsa_output.x"))
        #expect(try RouteSpecifier(parsing: "alsa") == .alsa(device: "default"))
        #expect(try RouteSpecifier(parsing: "alsa:hw:1,0") == .alsa(device: "hw:1,0"))
    }

    @Test func badSpecifiersNameTheCulprit() {
        #expect { try RouteSpecifier(parsing: "wav:") } throws: { ($0 as! RouteError).description.contains("needs a path") }
        #expect { try RouteSpecifier(parsing: "bluetooth:aa") } throws: { ($0 as! RouteError).description.contains("bluetooth:aa") }
        #expect { try RouteSpecifier(parsing: "null:x") } throws: { _ in true }
    }

    @Test func aMissingALSADeviceIsAClearError() {
        let route = ALSARoute(device: "hw:99,0")
        #expect { try route.start(pullingFrom: AudioRenderer(route: NullRoute())) } throws: { ($0 as! RouteError).description.hasPrefix("alsa:hw:99,0") }
    }
}
