// swift-tools-version:6.1
// The folder tree follows the layers of ../shared/DESIGN.md: data flows down
// (Core → Sources → Rendering → Routes → the `longform` command), and each
// module depends only on the modules above it. Each route backend is a module
// of its own, so that a tool links only the C libraries of the routes it uses.
import PackageDescription

// The speaker's audio path (the wire format's encoding and decoding, FLAC, the clock, the
// output's filter) compiled with optimisation in debug builds as well: unoptimised, its generic
// code runs tens of times slower, and three debug-built speakers and their sender on two cores
// left a room's output thread 330 ms late at the start (the in-step tests failed 5 runs in 8).
let realTimeSettings: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

let package = Package(
    name: "Longform",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "longform", targets: ["longform"]),
        .executable(name: "longform-speaker", targets: ["longform-speaker"]),
        .executable(name: "longform-latency", targets: ["longform-latency"]),
        .library(name: "LongformCore", targets: ["LongformCore"]),
        .library(name: "LongformSources", targets: ["LongformSources"]),
        .library(name: "LongformRendering", targets: ["LongformRendering"]),
        .library(name: "LongformRoutes", targets: ["LongformRoutes"]),
        .library(name: "LongformPulseAudio", targets: ["LongformPulseAudio"]),
        .library(name: "LongformALSA", targets: ["LongformALSA"]),
        .library(name: "LongformSpeakerSender", targets: ["LongformSpeakerSender"]),
        .library(name: "LongformAirPlayProtocol", targets: ["LongformAirPlayProtocol"]),
        .library(name: "LongformAirPlaySender", targets: ["LongformAirPlaySender"]),
        .library(name: "LongformLocalRouteCatalog", targets: ["LongformLocalRouteCatalog"]),
        .library(name: "LongformRouteCatalog", targets: ["LongformRouteCatalog"]),
        .library(name: "LongformPlayer", targets: ["LongformPlayer"]),
        .library(name: "LongformStore", targets: ["LongformStore"]),
        .library(name: "LongformLibrary", targets: ["LongformLibrary"]),
        .library(name: "LongformSpeakerProtocol", targets: ["LongformSpeakerProtocol"]),
        .library(name: "LongformSpeakerReceiver", targets: ["LongformSpeakerReceiver"]),
        .library(name: "LongformServer", targets: ["LongformServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // Without its default traits: swift-configuration is not needed.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: [
        // C libraries, each behind a system-library target. Only the module
        // named in the comment imports it.
        .systemLibrary(name: "CFFmpeg", path: "Sources/CFFmpeg", pkgConfig: "libavformat libavcodec libswresample libavutil",
                       providers: [.apt(["libavformat-dev", "libavcodec-dev", "libswresample-dev", "libavutil-dev"])]), // LongformSources
        .systemLibrary(name: "CSoxr", path: "Sources/CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]), // LongformRendering
        .systemLibrary(name: "CPulse", path: "Sources/CPulse", providers: [.apt(["libpulse-dev"])]), // LongformPulseAudio
        .systemLibrary(name: "CALSA", path: "Sources/CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]), // LongformALSA
        // No pkgConfig, as CPulse: avahi-client.pc's only flag is -D_REENTRANT, which SwiftPM refuses with a warning on every build.
        .systemLibrary(name: "CAvahi", path: "Sources/CAvahi", providers: [.apt(["libavahi-client-dev"])]), // LongformAirPlayDiscovery

        // Layer 1: media time, formats, sample buffers, the host clock, threads (no system calls but the clock's and threads').
        .target(name: "LongformCore", dependencies: [.product(name: "Logging", package: "swift-log")]),
        // Layer 2: decoding through FFmpeg.
        .target(name: "LongformSources", dependencies: ["LongformCore", "CFFmpeg", .product(name: "Logging", package: "swift-log")]),
        // Layer 3: the renderer, the synchronizer and the route protocol they play to.
        .target(name: "LongformRendering", dependencies: ["LongformCore", "CSoxr", .product(name: "Logging", package: "swift-log")]),
        // Layer 4: the routes every tool may use (null, WAV) and what every route is built on (route threads, rewinds).
        .target(name: "LongformRoutes", dependencies: ["LongformCore", "LongformRendering", .product(name: "Logging", package: "swift-log")]),
        // Layer 4: each backend in a module of its own, linking its own C library.
        .target(name: "LongformPulseAudio", dependencies: ["LongformCore", "LongformRendering", "LongformRoutes", "CPulse", .product(name: "Logging", package: "swift-log")]),
        .target(name: "LongformALSA", dependencies: ["LongformCore", "LongformRendering", "LongformRoutes", "CALSA", .product(name: "Logging", package: "swift-log")]),
        // Layer 4: the sender's side of the network speaker (the `speaker:` route).
        .target(name: "LongformSpeakerSender", dependencies: ["LongformCore", "LongformRendering", "LongformRoutes", "LongformSources", "LongformSpeakerProtocol",
                                                             .product(name: "Logging", package: "swift-log"),
                                                             .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")]),
        // Layer 4: AirPlay's wire formats (RTSP, SDP, RTP, ALAC framing, RAOP's timing and control
        // packets, DMAP), as values and pure functions: no socket, so that each is tested alone.
        .target(name: "LongformAirPlayProtocol", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        // Layer 4: the sender's side of AirPlay (the `airplay:` route): sessions with receivers, the
        // RTSP connection (SwiftNIO), the UDP ports (the speaker protocol's socket wrapper).
        .target(name: "LongformAirPlaySender", dependencies: ["LongformCore", "LongformRendering", "LongformRoutes", "LongformAirPlayProtocol", "LongformSpeakerProtocol",
                                                             .product(name: "Logging", package: "swift-log"),
                                                             .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")]),
        // Layer 4: finding AirPlay receivers over mDNS through the system's Avahi daemon (D-Bus):
        // `_raop._tcp` and `_airplay._tcp`, their TXT records read as values (`longform routes`).
        .target(name: "LongformAirPlayDiscovery", dependencies: ["LongformCore", "CAvahi", .product(name: "Logging", package: "swift-log")]),
        // Layer 4: the local routes `--route` names and `routes` lists (null, WAV, PulseAudio, ALSA), and the default one.
        .target(name: "LongformLocalRouteCatalog", dependencies: ["LongformCore", "LongformRendering", "LongformRoutes", "LongformPulseAudio", "LongformALSA"]),
        // Layer 4: what `--route` names: a local route, network speakers or AirPlay receivers.
        .target(name: "LongformRouteCatalog", dependencies: ["LongformCore", "LongformLocalRouteCatalog", "LongformRendering", "LongformRoutes", "LongformSpeakerSender", "LongformAirPlaySender",
                                                            "LongformAirPlayDiscovery"]),
        // Layer 4: the wire protocol between the speaker route and `longform speaker` (docs/speaker-protocol.md),
        // and the socket wrapper both ends use for what SwiftNIO does not offer.
        // Optimised in debug builds too (`realTimeSettings`): the tests run debug-built speakers.
        .target(name: "LongformSpeakerProtocol", dependencies: ["LongformCore", .product(name: "Crypto", package: "swift-crypto")],
                swiftSettings: realTimeSettings),
        // Layer 5: what enqueues items into a renderer.
        .target(name: "LongformPlayer", dependencies: ["LongformCore", "LongformSources", "LongformRendering", .product(name: "Logging", package: "swift-log")]),
        // Layer 5: what survives a restart: the playlist and where it was, in SQLite (GRDB).
        .target(name: "LongformStore", dependencies: ["LongformCore", "LongformPlayer", .product(name: "GRDB", package: "GRDB.swift")]),
        // Layer 5: the music directories, scanned into the store; paths confined to them.
        .target(name: "LongformLibrary", dependencies: ["LongformCore", "LongformSources", "LongformStore", .product(name: "Logging", package: "swift-log")]),
        // Layer 6: the HTTP API's request bodies and their decoding (no server: a fuzz target reads them).
        .target(name: "LongformAPIRequests"),
        // Layer 6: `longform serve`: the HTTP API, the event stream and the web player (Hummingbird).
        .target(name: "LongformServer", dependencies: [
            "LongformAPIRequests", "LongformAirPlayDiscovery", "LongformCore", "LongformRendering", "LongformRouteCatalog", "LongformPlayer", "LongformStore", "LongformLibrary",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], resources: [.copy("Resources")]),
        // Layer 7: the receiving side of the network speaker (`longform speaker`).
        .target(name: "LongformSpeakerReceiver", dependencies: [
            "LongformCore", "LongformRendering", "LongformRoutes", "LongformSpeakerProtocol",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ], swiftSettings: realTimeSettings),
        // Layer 8: what every command line shares: listen addresses, logging switches, stop signals, failures.
        .target(name: "LongformCommandSupport", dependencies: [
            "LongformCore", "LongformSpeakerProtocol", .product(name: "Logging", package: "swift-log"), .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // Layer 8: the speaker's command line, run by `longform speaker` and `longform-speaker`.
        .target(name: "LongformSpeakerCommand", dependencies: [
            "LongformCommandSupport", "LongformCore", "LongformLocalRouteCatalog", "LongformRoutes", "LongformSpeakerProtocol", "LongformSpeakerReceiver",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // Layer 8: the command line.
        .executableTarget(name: "longform", dependencies: [
            "LongformCore", "LongformSources", "LongformRendering", "LongformRoutes", "LongformLocalRouteCatalog", "LongformRouteCatalog", "LongformSpeakerSender",
            "LongformPlayer", "LongformStore", "LongformServer", "LongformCommandSupport", "LongformSpeakerCommand",
            "LongformSpeakerProtocol", "LongformAirPlayDiscovery", .product(name: "Logging", package: "swift-log"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // Layer 8: the network speaker alone, without FFmpeg (its links: SpeakerCommandTests).
        .executableTarget(name: "longform-speaker", dependencies: ["LongformCore", "LongformSpeakerCommand", .product(name: "ArgumentParser", package: "swift-argument-parser")]),

        // `scripts/bench`'s command-latency measurement (not part of the product).
        .executableTarget(name: "longform-latency", dependencies: ["LongformCore", "LongformRendering", "LongformRoutes", "LongformPulseAudio", "LongformPlayer"],
                          path: "Benchmarks/LatencyBenchmark"),

        // The smallest program on the engine: files to the null route, each second's peak printed.
        // Its links show the module split: no libpulse, libasound or swift-crypto (NullRouteMeterTests).
        .executableTarget(name: "longform-null-meter", dependencies: ["LongformPlayer", "LongformRendering", "LongformRoutes", .product(name: "Logging", package: "swift-log")],
                          path: "Examples/NullRouteMeter"),

        // Fuzz targets (`scripts/fuzz`): each parser that reads bytes from outside, under libFuzzer
        // when built with -DFUZZING -sanitize=fuzzer; built normally, each replays saved inputs.
        .target(name: "FuzzSupport", path: "Fuzz/FuzzSupport"),
        .executableTarget(name: "longform-fuzz-speaker-frames", dependencies: ["FuzzSupport", "LongformSpeakerProtocol", .product(name: "Crypto", package: "swift-crypto")],
                          path: "Fuzz/SpeakerFrameFuzzer", exclude: ["speaker-frames.dict"]),
        .executableTarget(name: "longform-fuzz-pairing", dependencies: ["FuzzSupport", "LongformSpeakerProtocol"], path: "Fuzz/PairingFuzzer"),
        .executableTarget(name: "longform-fuzz-clock-exchange", dependencies: ["FuzzSupport", "LongformSpeakerProtocol"], path: "Fuzz/ClockExchangeFuzzer"),
        .executableTarget(name: "longform-fuzz-flac-frames", dependencies: ["FuzzSupport", "LongformSpeakerProtocol", "LongformSources"], path: "Fuzz/FLACFrameFuzzer"),
        .executableTarget(name: "longform-fuzz-mp3-gapless", dependencies: ["FuzzSupport", "LongformSources"], path: "Fuzz/MP3GaplessFuzzer"),
        .executableTarget(name: "longform-fuzz-edit-script", dependencies: ["FuzzSupport", "LongformPlayer"], path: "Fuzz/EditScriptFuzzer"),
        .executableTarget(name: "longform-fuzz-api-requests", dependencies: ["FuzzSupport", "LongformAPIRequests"], path: "Fuzz/APIRequestFuzzer"),
        .executableTarget(name: "longform-fuzz-playlist-file", dependencies: ["FuzzSupport", "LongformPlayer"], path: "Fuzz/PlaylistFileFuzzer"),

        // Shared by the test targets: generating test audio with Debian's tools, reading WAV files.
        .target(name: "LongformTestSupport", dependencies: ["LongformCore"], path: "Tests/LongformTestSupport"),
        .testTarget(name: "LongformCoreTests", dependencies: ["LongformCore"]),
        .testTarget(name: "LongformSourcesTests", dependencies: ["LongformSources", "LongformTestSupport"]),
        .testTarget(name: "LongformRenderingTests", dependencies: ["LongformRendering", "LongformRoutes", "LongformSources", "LongformPlayer", "LongformTestSupport"]),
        .testTarget(name: "LongformPulseAudioTests", dependencies: ["LongformPulseAudio", "LongformLocalRouteCatalog", "LongformRouteCatalog", "LongformRoutes", "LongformRendering", "LongformSources", "LongformPlayer", "LongformTestSupport"]),
        .testTarget(name: "LongformSpeakerSenderTests", dependencies: ["LongformSpeakerSender", "LongformRendering", "LongformSources", "LongformTestSupport"]),
        .testTarget(name: "LongformRouteCatalogTests", dependencies: ["LongformLocalRouteCatalog", "LongformRouteCatalog", "LongformRoutes", "LongformALSA", "LongformSpeakerSender",
                                                                "LongformAirPlaySender", "LongformTestSupport"]),
        .testTarget(name: "LongformPlayerTests", dependencies: ["LongformPlayer", "LongformRoutes", "LongformSpeakerSender", "LongformRendering", "LongformSources", "LongformTestSupport"]),
        .testTarget(name: "LongformStoreTests", dependencies: ["LongformStore", "LongformPlayer", "LongformCore", "LongformTestSupport"]),
        .testTarget(name: "LongformLibraryTests", dependencies: ["LongformLibrary", "LongformStore", "LongformTestSupport"]),
        .testTarget(name: "LongformServerTests", dependencies: ["LongformTestSupport"]),
        .testTarget(name: "LongformSpeakerProtocolTests", dependencies: ["LongformSpeakerProtocol", "LongformSources", "LongformTestSupport", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(name: "LongformSpeakerReceiverTests", dependencies: ["LongformSpeakerReceiver", "LongformSpeakerProtocol", "LongformSpeakerSender", "LongformRoutes", "LongformCore",
                                                                   "LongformSources", "LongformTestSupport"]),
        .testTarget(name: "LongformCommandTests", dependencies: ["LongformTestSupport"]),
        .testTarget(name: "LongformAirPlayProtocolTests", dependencies: ["LongformAirPlayProtocol", "LongformTestSupport"]),
        .testTarget(name: "LongformAirPlayDiscoveryTests", dependencies: ["LongformAirPlayDiscovery", "LongformTestSupport"]),
        .testTarget(name: "LongformAirPlaySenderTests", dependencies: ["LongformAirPlaySender", "LongformAirPlayProtocol", "LongformRendering", "LongformSources", "LongformTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
