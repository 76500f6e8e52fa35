import Dispatch
import Logging
import LongformCore
import LongformPlayer

/// Keeps a player's saved state current: the whole state when the item, the playlist or the
/// transport changes, the position every second while playing, and everything on `finish()`.
/// Saves run on a queue of their own, never on the player's.
public final class PlayerStateRecorder: @unchecked Sendable {
    private let player: SampleBufferPlayer
    private let store: PlayerStateStore
    /// Writes to the store; never calls the player, so that `finish()` may wait for it from
    /// the player's own queue.
    private let saveQueue = DispatchQueue(label: "longform.state.save")
    /// Runs the once-a-second timer, which reads the player.
    private let timerQueue = DispatchQueue(label: "longform.state.timer")
    private let logger = Logger(label: LogLabel.player)
    private let timer: DispatchSourceTimer
    private var eventToken: SampleBufferPlayer.EventHandlerToken?

    /// Starts recording `player` into `store`.
    public init(player: SampleBufferPlayer, store: PlayerStateStore) {
        self.player = player
        self.store = store
        timer = DispatchSource.makeTimerSource(queue: timerQueue)
        timer.schedule(deadline: .now() + 1, repeating: 1, leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in
            guard let self, player.playbackState == .playing else { return }
            self.save(positionOnly: true)
        }
        timer.resume()
        eventToken = player.addEventHandler(includingOffsets: false) { [weak self] event in
            switch event {
            case .currentItemChanged, .playlistChanged, .stateChanged: self?.save(positionOnly: false)
            case .offsetChanged, .rateChanged, .itemFailed: return
            }
        }
    }

    /// Saves where the player is, and the playlist unless `positionOnly`, off the caller's thread.
    public func save(positionOnly: Bool = false) {
        let state = PlayerStateStore.State(entries: positionOnly ? [] : player.entries, currentIndex: player.currentIndex,
                                           offset: player.currentOffset ?? .zero, playbackState: player.playbackState)
        saveQueue.async { [store, logger] in
            do {
                if positionOnly { try store.savePosition(of: state) } else { try store.save(state) }
            } catch {
                logger.error("cannot save the player's state: \(error)")
            }
        }
    }

    /// Stops recording, saves everything once more and waits for the save. May be called from
    /// the player's event handler.
    public func finish() {
        timer.cancel()
        if let eventToken { player.removeEventHandler(eventToken) }
        eventToken = nil
        save()
        saveQueue.sync {}
    }
}
