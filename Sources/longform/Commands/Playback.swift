import Foundation
import LongformCore
import LongformPlayer
import LongformRendering
import LongformSources

/// The one path by which `render` and `play` run a playlist: a renderer on the route, a
/// synchronizer and a `PlaylistRun`, with progress and failures reported on the terminal.
enum Playback {
    struct Outcome {
        var frames: Int64
        var failures: [SourceError]
        var refusedEdits: [String]
    }

    /// Plays `items` to `route` until the playlist ends; reports failures on standard error.
    /// A `script` needs a `FrameActionRoute` (the as-fast-as-possible WAV route).
    static func run(items: [String], route: any AudioRoute, lookAhead: Double?, announce: Bool, script: EditScript? = nil) throws -> Outcome {
        let renderer = AudioRenderer(route: route)
        if let lookAhead { renderer.lookAheadDuration = lookAhead }
        let outcome = try PlaylistRun.run(items.map { PlaylistItem(location: $0) }, renderer: renderer, synchronizer: RenderSynchronizer(),
                                          script: script) { event, player in
            switch event {
            case .currentItemChanged(let index?, _):
                guard announce, let item = player.currentEntry?.item else { return }
                let artist = item.artist.map { " — \($0)" } ?? ""
                let duration = item.duration.map { String(format: " [%d:%02d]", Int($0.seconds) / 60, Int($0.seconds) % 60) } ?? ""
                print("▶ \(index + 1)/\(player.entries.count) \(item.displayTitle)\(artist)\(duration)")
            case .itemFailed(let index, _, let error):
                FileHandle.standardError.write(Data("longform: item \(index + 1) skipped: \(error)\n".utf8))
            default:
                break
            }
        }
        for refusal in outcome.refusedEdits { FileHandle.standardError.write(Data("longform: \(refusal)\n".utf8)) }
        return Outcome(frames: route.clock.framesRendered, failures: outcome.failures, refusedEdits: outcome.refusedEdits)
    }
}
