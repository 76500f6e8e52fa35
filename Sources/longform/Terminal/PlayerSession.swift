import Dispatch
import Foundation
import Logging
import LongformCommandSupport
import LongformCore
import LongformPlayer
import LongformStore
#if canImport(Glibc)
import Glibc
#endif

/// One run of `longform play`: the player, its saved state, and either the full-screen terminal
/// player (keys and a redrawn screen) or, without a terminal, a line per item. The state is saved
/// when the item, the playlist or the transport changes, every second while playing, and on the
/// way out (`PlayerStateRecorder`), so that a new run without items resumes there.
final class PlayerSession: @unchecked Sendable {
    static let seekStep = 10.0

    private let player: SampleBufferPlayer
    private let store: PlayerStateStore
    private let routeName: String
    private let isInteractive: Bool
    private let input = TerminalInput()
    private let done = DispatchSemaphore(value: 0)
    private let recorder: PlayerStateRecorder
    private let logger = Logger(label: LogLabel.command)
    private var timer: DispatchSourceTimer?
    private var stopSignals: StopSignals?
    private let failures = Failures()

    /// The failures seen, for the exit status.
    final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.lock(); count += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return count }
    }

    init(player: SampleBufferPlayer, store: PlayerStateStore, routeName: String, isInteractive: Bool) {
        self.player = player
        self.store = store
        self.routeName = routeName
        self.isInteractive = isInteractive
        recorder = PlayerStateRecorder(player: player, store: store)
        // The screen reads the offset when it redraws; offset events would only cost wake-ups.
        player.addEventHandler(includingOffsets: false) { [weak self] event in self?.handle(event) }
    }

    /// Runs until the user quits or the playlist ends; returns the number of items that failed.
    /// Create the session before starting the player, so that it sees the first item.
    func run() -> Int {
        if isInteractive {
            FileHandle.standardOutput.write(Data("\u{1B}[?25l".utf8)) // hide the cursor
            input.start { [weak self] key in self?.handle(key) }
        }
        stopSignals = StopSignals([SIGINT, SIGTERM, SIGHUP]) { [weak self] in self?.finish() }
        if isInteractive {
            // The screen is redrawn four times a second; without a screen nothing needs waking.
            let interval = 0.25
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(50))
            timer.setEventHandler { [weak self] in self?.tick() }
            timer.resume()
            self.timer = timer
        }
        draw()
        // Nothing playable at all: the player may have stopped already (finishing twice is harmless).
        if player.playbackState == .stopped { finish() }
        done.wait()
        return failures.value
    }

    private func tick() {
        draw()
    }

    private func handle(_ event: PlayerEvent) {
        switch event {
        case .currentItemChanged(let index?, _):
            if !isInteractive, let item = player.currentEntry?.item {
                let artist = item.artist.map { " — \($0)" } ?? ""
                let duration = item.duration.map { " [\(NowPlayingScreen.clock($0.seconds))]" } ?? ""
                print("▶ \(index + 1)/\(player.entries.count) \(item.displayTitle)\(artist)\(duration)")
            }
        case .itemFailed(let index, _, let error):
            failures.add()
            if !isInteractive { FileHandle.standardError.write(Data("longform: item \(index + 1) skipped: \(error)\n".utf8)) }
        case .stateChanged(.stopped):
            // The playlist played to its end. Not on the player's queue, which `finish()`'s
            // last save reads.
            DispatchQueue.global().async { self.finish() }
        case .playlistChanged, .stateChanged:
            break
        default:
            return
        }
        draw()
    }

    private func handle(_ key: PlayerKey) {
        switch key {
        case .togglePause:
            if player.playbackState == .playing { player.pause() } else { player.play() }
        case .next:
            player.next()
        case .previous:
            player.previous()
        case .seekForward, .seekBackward:
            guard let offset = player.currentOffset else { return }
            let step = key == .seekForward ? Self.seekStep : -Self.seekStep
            try? player.seek(to: MediaTime(seconds: max(offset.seconds + step, 0), preferredTimescale: 1_000_000))
        case .quit:
            finish()
        }
        draw()
    }

    private let drawing = NSLock()
    private let finishing = NSLock()
    private var hasFinished = false

    /// Saves, restores the terminal and lets `run()` return. Runs once.
    private func finish() {
        finishing.lock()
        defer { finishing.unlock() }
        guard !hasFinished else { return }
        hasFinished = true
        timer?.cancel()
        recorder.finish()
        if isInteractive {
            input.restore()
            FileHandle.standardOutput.write(Data("\u{1B}[?25h\n".utf8))
        }
        done.signal()
    }

    private func draw() {
        guard isInteractive else { return }
        let screen = NowPlayingScreen(routeName: routeName, entries: player.entries, currentIndex: player.currentIndex,
                                      offset: player.currentOffset, state: player.playbackState)
        // Home, then each line cleared to its end, then the rest of the screen cleared. The timer,
        // the keys and the player's events all redraw: one screen at a time.
        let text = "\u{1B}[H" + screen.lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J"
        drawing.lock()
        FileHandle.standardOutput.write(Data(text.utf8))
        drawing.unlock()
    }
}
