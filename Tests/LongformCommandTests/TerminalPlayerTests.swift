import Foundation
import LongformTestSupport
import Testing

/// `longform play` as a person uses it: in a terminal (tmux), steered with keys, read off the
/// screen; quit and started again without items, it resumes where it was, also after a crash.
@Suite(.serialized) struct TerminalPlayerTests {
    /// A tmux session running one command in a 100×30 window, on a tmux server of the test's own.
    struct Terminal {
        static let socket = "longform-test-\(ProcessInfo.processInfo.processIdentifier)"
        let name = "player-\(UUID().uuidString.prefix(8))"

        func start(_ command: String) throws {
            // The tmux server it starts keeps every descriptor it inherits open, and one of
            // Foundation's (the socket by which it learns that the child exited) would then hang
            // the wait for the client: the shell closes all but 0-2 first. The pane stays after
            // the command ends, so that its exit status can be read.
            let script = #"for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; "#
                + #"exec tmux -L "$0" new-session -d -s "$1" -x 100 -y 30 "$2; echo EXITED \$?; sleep 600" </dev/null >/dev/null 2>&1"#
            // Starting tmux's server now and then fails (status 1) while the whole suite loads
            // both cores; a second try after a pause has always worked.
            for attempt in 1...3 {
                do {
                    try ExternalTool.check("/bin/bash", ["-c", script, Self.socket, name, command])
                    return
                } catch where attempt < 3 {
                    Thread.sleep(forTimeInterval: 0.5)
                }
            }
        }

        func tmux(_ arguments: [String]) throws -> ExternalTool.Result { try ExternalTool.run("tmux", ["-L", Self.socket] + arguments) }

        func send(_ keys: String...) throws {
            let result = try tmux(["send-keys", "-t", name] + keys)
            if result.status != 0 { throw TmuxError(description: "tmux send-keys: \(result.errorOutput)") }
        }

        /// What the pane shows; empty until the session exists.
        func screen() throws -> String {
            let result = try tmux(["capture-pane", "-p", "-t", name])
            return result.status == 0 ? result.output : ""
        }

        /// Waits until the screen shows every one of `texts`; returns the screen.
        @discardableResult
        func waitFor(_ texts: String..., seconds: Double = 10) throws -> String {
            let deadline = Date(timeIntervalSinceNow: seconds)
            var last = ""
            while Date() < deadline {
                last = try screen()
                if texts.allSatisfy(last.contains) { return last }
                Thread.sleep(forTimeInterval: 0.1)
            }
            Issue.record("the screen never showed \(texts):\n\(last)")
            return last
        }

        func stop() { _ = try? tmux(["kill-session", "-t", name]) }

        /// Ends the test's tmux server.
        static func stopServer() { _ = try? ExternalTool.run("tmux", ["-L", socket, "kill-server"]) }
    }

    struct TmuxError: Error, CustomStringConvertible {
        var description: String
    }

    /// Three 30 s tagged FLAC items.
    static func items() throws -> [String] {
        try [("alpha", "Alpha Song", 330), ("bravo", "Bravo Song", 440), ("charlie", "Charlie Song", 550)].map { name, title, frequency in
            let reference = try TestAudio.reference("terminal-\(name)", seconds: 30, startFrequency: frequency)
            return try TestAudio.encode(reference, as: "flac", arguments: ["-c:a", "flac", "-metadata", "title=\(title)", "-metadata", "artist=The Testers"])
        }
    }

    /// The elapsed time shown on `screen`, in seconds.
    static func elapsed(_ screen: String) -> Int? {
        guard let range = screen.range(of: #"(\d\d):(\d\d) \["#, options: .regularExpression) else { return nil }
        let parts = screen[range].prefix(5).split(separator: ":").compactMap { Int($0) }
        return parts.count == 2 ? parts[0] * 60 + parts[1] : nil
    }

    @Test func keysSteerThePlayerAndItResumesWhereItStopped() throws {
        let items = try Self.items()
        let state = TestAudio.path("terminal-state-\(UUID().uuidString)")
        let play = "\(ExternalTool.longformExecutable) play --route null --state \(state)"
        let terminal = Terminal()
        defer { Terminal.stopServer() }
        try terminal.start(([play] + items).joined(separator: " "))
        try terminal.waitFor("Alpha Song", "The Testers", "▶ playing  1/3", "00:30", "Charlie Song")
        try terminal.send("n")
        try terminal.waitFor("Bravo Song", "▶ playing  2/3")
        try terminal.send("p")
        try terminal.waitFor("Alpha Song", "▶ playing  1/3")
        try terminal.send("n")
        try terminal.waitFor("▶ playing  2/3")
        try terminal.send("Space")
        try terminal.waitFor("paused  2/3")
        try terminal.send("Right")
        try terminal.send("Right")
        let sought = try terminal.waitFor("00:2")
        #expect(Self.elapsed(sought).map { (20...21).contains($0) } == true, "\(sought)")
        try terminal.send("Left")
        try terminal.waitFor("00:1")
        try terminal.send("Right")
        try terminal.waitFor("00:2")
        try terminal.send("q")
        try terminal.waitFor("EXITED 0")
        terminal.stop()

        // Started again without items: the same item, paused at the same offset.
        let again = Terminal()
        defer { again.stop() }
        try again.start(play)
        let resumed = try again.waitFor("Bravo Song", "paused  2/3", "Charlie Song")
        #expect(Self.elapsed(resumed).map { (20...21).contains($0) } == true, "\(resumed)")

        // Playing, then killed without warning: it comes back within the last second saved.
        try again.send("Space")
        let playing = try again.waitFor("▶ playing  2/3", "00:23")
        #expect(Self.elapsed(playing) == 23)
        // Only the player: the shell around it in the pane must live on to print its exit status.
        _ = try ExternalTool.run("pkill", ["-KILL", "-f", "^\(play)$"])
        try again.waitFor("EXITED 137")
        again.stop()
        let afterCrash = Terminal()
        defer { afterCrash.stop() }
        try afterCrash.start(play)
        let recovered = try afterCrash.waitFor("Bravo Song", "▶ playing  2/3")
        #expect(Self.elapsed(recovered).map { (22...24).contains($0) } == true, "\(recovered)")
        try afterCrash.send("q")
        try afterCrash.waitFor("EXITED 0")
    }

    @Test func aCorruptStateDatabaseIsNamedAndLeftAlone() throws {
        let state = TestAudio.path("terminal-corrupt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let database = state + "/player.sqlite"
        let garbage = Data(repeating: 0x5A, count: 8192)
        try garbage.write(to: URL(fileURLWithPath: database))
        let result = try ExternalTool.run(ExternalTool.longformExecutable, ["play", "--route", "null", "--state", state])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains(database) && result.errorOutput.contains("not a database"), "\(result.errorOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == garbage)
    }

    @Test func withoutItemsOrASavedPlaylistItSaysSo() throws {
        let state = TestAudio.path("terminal-empty-\(UUID().uuidString)")
        let result = try ExternalTool.run(ExternalTool.longformExecutable, ["play", "--route", "null", "--state", state])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("nothing to play"), "\(result.errorOutput)")
    }

    @Test func directoriesAndM3UPlaylistsExpandInNameOrder() throws {
        let items = try Self.items()
        let folder = TestAudio.path("terminal-folder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: folder + "/disc 2", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/disc 10", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: items[2], toPath: folder + "/disc 2/track.flac")
        try FileManager.default.copyItem(atPath: items[1], toPath: folder + "/disc 10/track.flac")
        try "not audio".write(toFile: folder + "/notes.txt", atomically: true, encoding: .utf8)
        let playlist = folder + "/list.m3u8"
        try "#EXTM3U\n#EXTINF:30,Alpha\n\(items[0])\ndisc 2/track.flac\n".write(toFile: playlist, atomically: true, encoding: .utf8)
        // Not a terminal: a line per item; SIGTERM ends it, and the playlist is saved.
        let state = TestAudio.path("terminal-expand-\(UUID().uuidString)")
        let listed = try ExternalTool.run("/bin/sh", ["-c", "\(ExternalTool.longformExecutable) play --route null --state '\(state)' '\(playlist)' '\(folder)' & sleep 1.5; kill $!; wait $!"])
        #expect(listed.output.hasPrefix("▶ 1/4 Alpha Song — The Testers [00:30]"), "\(listed.output)")
        let saved = try ExternalTool.run("sqlite3", [state + "/player.sqlite", "SELECT location FROM playlistItem ORDER BY position"])
        #expect(saved.output.split(separator: "\n").map(String.init) == [items[0], folder + "/disc 2/track.flac", folder + "/disc 2/track.flac", folder + "/disc 10/track.flac"])
    }
}
