import Dispatch
import LongformCore
import LongformRendering
import LongformSources
import Synchronization

/// Plays a playlist once, from its first item until it ends (or is stopped), through a
/// `SampleBufferPlayer`: what `longform render` and `longform play` do. On a `FrameActionRoute`
/// the start and every scripted edit run on the route's thread at their exact output frames.
public enum PlaylistRun {
    /// What happened during a run.
    public struct Outcome: Sendable {
        /// The items that could not be played, in the order they failed.
        public var failures: [SourceError]
        /// The edits the player refused, each with its reason.
        public var refusedEdits: [String]
    }

    /// Plays `items` on `engine`, which must not be started yet (make it with `readsTagsAhead`
    /// false: a run shows no playlist), and returns when the playlist has ended; the engine is
    /// stopped then. `events` sees every player event, on the player's queue.
    public static func run(_ items: [PlaylistItem], on engine: PlaybackEngine, script: EditScript? = nil,
                           events: @escaping @Sendable (PlayerEvent, SampleBufferPlayer) -> Void = { _, _ in }) throws(RouteError) -> Outcome {
        let player = engine.player, renderer = engine.renderer
        let failures = Mutex<[SourceError]>([])
        let refused = Refusals()
        let finished = DispatchSemaphore(value: 0)
        let actionRoute = renderer.route as? any FrameActionRoute
        // Nobody watches the offset of a run; every offset tick would stop a WAV route.
        player.addEventHandler(includingOffsets: false) { event in
            events(event, player)
            switch event {
            case .itemFailed(_, _, let error):
                failures.withLock { $0.append(error) }
            case .stateChanged(.stopped):
                // Runs while the route waits at the last boundary: nothing more is written.
                actionRoute?.removeAllActions()
                finished.signal()
            default:
                break
            }
        }
        player.append(items)
        if let actionRoute {
            // All actions are in place before the route starts, so that those at frame 0 keep their order.
            actionRoute.perform(atFrame: 0) { player.play() }
            if let script { schedule(script, on: actionRoute, player: player, refused: refused) }
            try engine.start()
        } else {
            try engine.start()
            player.play()
        }
        if !items.isEmpty { finished.wait() }
        engine.stop()
        return Outcome(failures: failures.withLock { $0 }, refusedEdits: refused.reasons.withLock { $0 })
    }

    private final class Refusals: Sendable {
        let reasons = Mutex<[String]>([])
    }

    private static func schedule(_ script: EditScript, on route: any FrameActionRoute, player: SampleBufferPlayer, refused: Refusals) {
        let rate = Double(route.format.sampleRate)
        for (number, edit) in script.edits.enumerated() {
            let frame = Int64((edit.time * rate).rounded())
            route.perform(atFrame: frame) {
                do {
                    try EditScript.apply(edit.operation, to: player)
                } catch {
                    refused.reasons.withLock { $0.append("edit \(number + 1) (\(edit)) refused: \(error)") }
                }
            }
            if case .pause(let seconds) = edit.operation {
                route.perform(atFrame: frame + Int64((seconds * rate).rounded())) { player.play() }
            }
        }
    }
}
