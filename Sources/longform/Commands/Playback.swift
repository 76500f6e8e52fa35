import Foundation
import LongformCore
import LongformPlayer
import LongformRendering
import LongformSources

/// How `render` runs its playlist: a `PlaybackEngine` on the route and a `PlaylistRun`,
/// with failures and refused edits reported on standard error. (`play` has its own session, with
/// the screen and the saved state: `PlayerSession`.)
enum Playback {
    struct Outcome {
        var frames: Int64
        var failures: [SourceError]
        var refusedEdits: [String]
    }

    /// Plays `items` to `route` until the playlist ends; reports failures on standard error.
    /// A `script` needs a `FrameActionRoute` (the as-fast-as-possible WAV route).
    static func run(items: [String], route: any AudioRoute, lookAhead: Double?, script: EditScript? = nil) throws -> Outcome {
        let engine = PlaybackEngine(route: route, lookAheadDuration: lookAhead, readsTagsAhead: false)
        let outcome = try PlaylistRun.run(items.map { PlaylistItem(location: $0) }, on: engine, script: script) { event, _ in
            if case .itemFailed(let index, _, let error) = event {
                FileHandle.standardError.write(Data("longform: item \(index + 1) skipped: \(error)\n".utf8))
            }
        }
        for refusal in outcome.refusedEdits { FileHandle.standardError.write(Data("longform: \(refusal)\n".utf8)) }
        return Outcome(frames: route.clock.framesRendered, failures: outcome.failures, refusedEdits: outcome.refusedEdits)
    }
}
