import ArgumentParser
import Foundation
import LongformCommandSupport
import LongformRouteCatalog
import LongformServer
import LongformStore

/// `longform serve`: the player as a daemon, steered over HTTP.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the player as a daemon with an HTTP API, live events and a web player.",
        discussion: """
            Open the printed address in a browser for the web player; the API is described at /api/openapi.yaml \
            (docs/server.md). The playlist, position, volume, route, network speakers' own volumes and library are kept in \
            SQLite under --state, and a \
            restart resumes where it was. Only files inside the --music directories can be added (and http(s) URLs); the \
            directories are scanned into the library and rescanned when files change. Listening on an address other than \
            loopback needs a token: --token, or one generated and printed at start. SIGINT or SIGTERM stops, saving the state.
            """
    )

    @Option(name: .long, help: "Address and port to listen on: HOST:PORT, [IPv6]:PORT or PORT.")
    var http = "127.0.0.1:8080"

    @Option(name: .long, help: "Directory of the database (default: $XDG_STATE_HOME/longform or ~/.local/state/longform).")
    var state: String?

    @Option(name: .long, help: "null, pulse[:SINK], alsa[:DEVICE], speaker:HOST:PORT[,HOST:PORT...][?codec=flac|pcm|float] (the codec: how audio goes to the speakers, FLAC by default) or airplay:NAME|HOST[:PORT][,...][?password=TEXT], or both in one group (speaker:...,airplay:..., docs/route-groups.md) (default: the saved route, else PulseAudio, ALSA or null; speakers that require pairing get the secret in $LONGFORM_SPEAKER_SECRET; speakers ask for the clock on a free UDP port, or $LONGFORM_SPEAKER_TIMING_PORT; AirPlay receivers get the password in $LONGFORM_AIRPLAY_PASSWORD unless the route gives one).")
    var route: String?

    @Option(name: .long, help: "A directory of music (repeat for several).")
    var music: [String] = []

    @Flag(name: .long, help: "Rescan the music directories only when asked (POST /api/library/rescan), not when files change.")
    var noWatch = false

    @Option(name: .long, help: "The token clients must send (default beyond loopback: a generated one).")
    var token: String?

    @Option(name: .long, help: "Sample rate the route plays at, in Hz.")
    var sampleRate = 44_100

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        _ = try ListenAddress(parsing: http, option: "--http")
        if let route {
            let specifier = try RouteSpecifier(parsing: route)
            if case .local(.wav) = specifier { throw ValidationError("serve plays to null, pulse or alsa routes, not to a WAV file") }
        }
        if let token, token.isEmpty { throw ValidationError("--token must not be empty") }
    }


    func run() async throws {
        logging.bootstrap(defaultLevel: .info)
        let address = try ListenAddress(parsing: http, option: "--http")
        let configuration = ServerConfiguration(host: address.host, port: address.port, token: token,
                                                stateDirectory: state ?? PlayerStateStore.defaultDirectory(),
                                                route: try route.map { try RouteSpecifier(parsing: $0) },
                                                musicDirectories: music, isWatchingMusicDirectories: !noWatch, sampleRate: sampleRate)
        let server: PlayerServer
        do { server = try PlayerServer(configuration: configuration) } catch { throw CommandFailure(error.description) }
        let stopSignals = StopSignals { server.stop() }
        let token = server.token
        let displayHost = address.host.contains(":") ? "[\(address.host)]" : address.host
        try await server.run { port in
            // One line a supervisor or a test can read: where the player is.
            var line = "longform: serving http://\(displayHost):\(port)/"
            if let token { line += "?token=\(token)\nlongform: token \(token)" }
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
        stopSignals.cancel()
    }
}
