import LongformRendering
import LongformALSA
import LongformAirPlaySender
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

    @Test func airPlaySpecifiersParseWithoutShowingThePassword() throws {
        #expect(try RouteSpecifier(parsing: "airplay:10.0.0.2") == .airPlay(endpoints: [AirPlayEndpoint(host: "10.0.0.2")], password: nil))
        let group = try RouteSpecifier(parsing: "airplay:kitchen.local:7000,[fe80::1],[fe80::2]:5001?password=s3cret")
        #expect(group == .airPlay(endpoints: [AirPlayEndpoint(host: "kitchen.local", port: 7000), AirPlayEndpoint(host: "fe80::1"),
                                              AirPlayEndpoint(host: "fe80::2", port: 5001)], password: "s3cret"))
        #expect(group.description == "airplay:kitchen.local:7000,[fe80::1],[fe80::2]:5001")
        #expect(group.makeRoute().name == group.description)
        let format = group.makeRoute(sampleRate: 48_000, channelCount: 6).format
        #expect(format.sampleRate == 44_100 && format.channelCount == 2)
        #expect(try RouteSpecifier(parsing: "airplay:Living Room") == .airPlay(endpoints: [AirPlayEndpoint(host: "Living Room")], password: nil))
        for bad in ["airplay:", "airplay:a:0", "airplay:a,", "airplay:fe80::1", "airplay:a:99999", "airplay:a?pass=x"] {
            #expect(throws: RouteError.self, "\(bad)") { try RouteSpecifier(parsing: bad) }
        }
        #expect { try RouteSpecifier(parsing: "airplay:a,b:x") } throws: { ($0 as! RouteError).description.contains("'b:x' is not HOST or HOST:PORT") }
    }

    @Test func speakersAndReceiversMakeOneGroup() throws {
        let group = try RouteSpecifier(parsing: "airplay:Kitchen,10.0.0.3?password=a,b,speaker:10.0.0.5:7700?codec=pcm,SPEAKER:10.0.0.6:7700?codec=pcm")
        #expect(group == .group([.speaker(endpoints: [SpeakerEndpoint(host: "10.0.0.5", port: 7700), SpeakerEndpoint(host: "10.0.0.6", port: 7700)], codec: .pcm),
                                 .airPlay(endpoints: [AirPlayEndpoint(host: "Kitchen"), AirPlayEndpoint(host: "10.0.0.3")], password: "a,b")]))
        #expect(group.description == "speaker:10.0.0.5:7700,10.0.0.6:7700?codec=pcm,airplay:Kitchen,10.0.0.3")
        #expect(group.memberNames == ["10.0.0.5:7700", "10.0.0.6:7700", "Kitchen", "10.0.0.3"])
        let route = group.makeRoute(sampleRate: 48_000, channelCount: 6)
        #expect(route.name == group.description)
        #expect(route.format.sampleRate == 44_100 && route.format.channelCount == 2)
        let routeGroup = try #require(route as? RouteGroup)
        #expect(routeGroup.memberNames == group.memberNames)
        // The speakers, sent minutes ahead, lead; the change margin is the receivers' (0.4 s and a packet).
        #expect(routeGroup.leaderIndex == 0)
        #expect(routeGroup.clock.rewindMarginFrames == 17_992)
        // Two parts of one family are one member.
        #expect(try RouteSpecifier(parsing: "speaker:a:1,speaker:b:2") == .speaker(endpoints: [SpeakerEndpoint(host: "a", port: 1), SpeakerEndpoint(host: "b", port: 2)], codec: .default))
        #expect { try RouteSpecifier(parsing: "speaker:a:1?codec=pcm,speaker:b:2") } throws: { ($0 as! RouteError).description.contains("share one codec") }
        #expect { try RouteSpecifier(parsing: "airplay:a?password=x,airplay:b") } throws: { ($0 as! RouteError).description.contains("share one") }
        #expect { try RouteSpecifier(parsing: "speaker:a:1,airplay:b:x") } throws: { ($0 as! RouteError).description.contains("'b:x' is not HOST or HOST:PORT") }
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
