import ArgumentParser
import Foundation
import LongformRoutes

/// `longform play`: items in real time to a route.
struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play items in real time, gapless.",
        discussion: "Without --route, plays to PulseAudio if a server runs, else ALSA's default device, else the WAV file longform-play.wav (named on standard error)."
    )

    @Option(name: .long, help: "null, wav:PATH, pulse[:SINK] or alsa[:DEVICE] (see `longform routes`).")
    var route: String?

    @Option(name: .long, help: "Sample rate the route plays at, in Hz.")
    var sampleRate = 44_100

    @Option(name: .long, help: "Seconds of audio to keep enqueued ahead of the playhead (default: the route's).")
    var lookahead: Double?

    @OptionGroup var logging: LoggingOptions

    @Argument(help: "Files or http(s) URLs to play, in order.")
    var items: [String]

    func validate() throws {
        guard !items.isEmpty else { throw ValidationError("name at least one item") }
        if let lookahead, lookahead <= 0 { throw ValidationError("--lookahead must be positive") }
        if let route { _ = try RouteSpecifier(parsing: route) }
    }

    func run() throws {
        logging.bootstrap()
        let specifier = try route.map { try RouteSpecifier(parsing: $0) } ?? RouteCatalog.defaultRoute(fallbackWAVPath: "longform-play.wav")
        if route == nil { FileHandle.standardError.write(Data("longform: playing to \(specifier)\n".utf8)) }
        let outcome = try Playback.run(items: items, route: specifier.makeRoute(sampleRate: sampleRate), lookAhead: lookahead, announce: true)
        if !outcome.failures.isEmpty { throw ExitCode(1) }
    }
}
