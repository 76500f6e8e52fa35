import LongformRendering
import LongformALSA
import LongformLocalRouteCatalog
import LongformRouteCatalog
import LongformRoutes
import LongformSpeakerSender
import Testing

@Suite struct RouteSpecifierTests {
    @Test func specifiersParse() throws {
        #expect(try RouteSpecifier(parsing: "null") == .local(.null))
        #expect(try RouteSpecifier(parsing: "wav:/tmp/a.wav") == .local(.wav(path: "/tmp/a.wav")))
        #expect(try RouteSpecifier(parsing: "pulse") == .local(.pulse(sink: nil)))
        #expect(try RouteSpecifier(parsing: "pulse:alsa_output.x") == .local(.pulse(sink: "alsa_output.x")))
        #expect(try RouteSpecifier(parsing: "alsa") == .local(.alsa(device: "default")))
        #expect(try RouteSpecifier(parsing: "alsa:hw:1,0") == .local(.alsa(device: "hw:1,0")))
        #expect(try RouteSpecifier(parsing: "speaker:kitchen.local:7878,[fe80::1]:7879,10.0.0.2:7878")
                == .speaker(endpoints: [SpeakerEndpoint(host: "kitchen.local", port: 7878), SpeakerEndpoint(host: "fe80::1", port: 7879),
                                        SpeakerEndpoint(host: "10.0.0.2", port: 7878)], codec: .flac))
        #expect(try RouteSpecifier(parsing: "speaker:[fe80::1]:7879").description == "speaker:[fe80::1]:7879")
        #expect(try RouteSpecifier(parsing: "speaker:a:7878,[fe80::1]:7879?codec=flac")
                == .speaker(endpoints: [SpeakerEndpoint(host: "a", port: 7878), SpeakerEndpoint(host: "fe80::1", port: 7879)], codec: .flac))
        for codec in SpeakerCodec.allCases {
            let text = "speaker:a:7878?codec=\(codec.rawValue)"
            #expect(try RouteSpecifier(parsing: text).description == (codec == .default ? "speaker:a:7878" : text))
            #expect(try RouteSpecifier(parsing: text).makeRoute().name == (codec == .default ? "speaker:a:7878" : text))
        }
    }

    @Test func badSpecifiersNameTheCulprit() {
        #expect { try RouteSpecifier(parsing: "wav:") } throws: { ($0 as! RouteError).description.contains("needs a path") }
        #expect { try RouteSpecifier(parsing: "bluetooth:aa") } throws: { ($0 as! RouteError).description.contains("bluetooth:aa") }
        #expect { try RouteSpecifier(parsing: "null:x") } throws: { _ in true }
        for bad in ["speaker:", "speaker:kitchen", "speaker:kitchen:0", "speaker:kitchen:7878,", "speaker:fe80::1:7878", "speaker:a:99999"] {
            #expect(throws: RouteError.self, "\(bad)") { try RouteSpecifier(parsing: bad) }
        }
        #expect { try RouteSpecifier(parsing: "speaker:a:7878,attic") } throws: { ($0 as! RouteError).description.contains("'attic' is not HOST:PORT") }
        for bad in ["speaker:a:7878?codec=opus", "speaker:a:7878?flac", "speaker:a:7878?codec="] {
            #expect(throws: RouteError.self, "\(bad)") { try RouteSpecifier(parsing: bad) }
        }
        #expect { try RouteSpecifier(parsing: "speaker:a:7878?codec=mp3") } throws: {
            ($0 as! RouteError).description.contains("'?codec=mp3' is not a codec; use ?codec= one of flac, pcm, float")
        }
    }

    @Test func aMissingALSADeviceIsAClearError() {
        let route = ALSARoute(device: "hw:99,0")
        #expect { try route.start(pullingFrom: AudioRenderer(route: NullRoute())) } throws: { ($0 as! RouteError).description.hasPrefix("alsa:hw:99,0") }
    }
}
