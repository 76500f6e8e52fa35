import ArgumentParser
import Foundation
import LongformCommandSupport
import LongformCore
import LongformPlayer
import LongformRendering
import LongformRoutes
import LongformSources

/// `longform render`: items back to back, gapless, to a WAV file as fast as possible, through the
/// same renderer and synchronizer as real-time playback.
struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render items back to back, gapless, to a WAV file as fast as possible.",
        discussion: "Items are files or http(s) URLs, played as a playlist by the same player as `longform play`. An item that cannot be played is reported and skipped; the others are written back to back. With --script, the playlist is edited while it renders, each edit at an exact output frame. Exits with status 1 when an item failed or an edit was refused."
    )

    @Option(name: .shortAndLong, help: "The WAV file to write.")
    var output: String

    @Option(name: .long, help: "Output sample rate in Hz.")
    var sampleRate = 44_100

    @Option(name: .long, help: "Output channel count.")
    var channels = 2

    @Option(name: .long, help: "Output sample format: s16, s24 or f32 (IEEE float).")
    var sampleFormat: String = "s16"

    @Option(name: .long, help: "Seconds of audio the renderer keeps enqueued ahead of the playhead.")
    var lookahead: Double = 10

    @Option(name: .long, help: "A JSON file of playlist edits, each applied when the output reaches its time (see docs/edit-scripts.md).")
    var script: String?

    @OptionGroup var logging: LoggingOptions

    @Argument(help: "Files or http(s) URLs to render, in order.")
    var items: [String]

    func validate() throws {
        guard OutputSampleFormat(rawValue: sampleFormat) != nil else { throw ValidationError("--sample-format must be s16, s24 or f32, not '\(sampleFormat)'") }
        guard (8_000...384_000).contains(sampleRate) else { throw ValidationError("--sample-rate must be between 8000 and 384000") }
        guard (1...8).contains(channels) else { throw ValidationError("--channels must be between 1 and 8") }
        guard lookahead > 0 else { throw ValidationError("--lookahead must be positive") }
        guard !items.isEmpty else { throw ValidationError("name at least one item") }
    }

    func run() throws {
        logging.bootstrap()
        let route = WAVFileRoute(path: output, sampleRate: sampleRate, channelCount: channels,
                                 sampleFormat: OutputSampleFormat(rawValue: sampleFormat)!, pacing: .asFastAsPossible, lookAhead: lookahead)
        let edits = try script.map { path in
            do throws(EditScript.ReadError) { return try EditScript(contentsOfFile: path) } catch { throw CommandFailure(error.description) }
        }
        let outcome = try Playback.run(items: items, route: route, lookAhead: lookahead, script: edits)
        if let error = route.error { throw ValidationError("\(output): \(error)") }
        let seconds = Double(outcome.frames) / Double(sampleRate)
        print("wrote \(output): \(outcome.frames) frames (\(String(format: "%.3f", seconds)) s)\(outcome.failures.isEmpty ? "" : ", \(outcome.failures.count) item(s) skipped")")
        if !outcome.failures.isEmpty || !outcome.refusedEdits.isEmpty { throw ExitCode(1) }
    }
}
