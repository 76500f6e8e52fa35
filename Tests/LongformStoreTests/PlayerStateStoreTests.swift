import Foundation
import LongformCore
import LongformPlayer
import LongformStore
import LongformTestSupport
import Testing

/// The saved player state: what goes in comes back, and a database that cannot be read is named
/// and left as it was.
@Suite struct PlayerStateStoreTests {
    func freshDirectory(_ name: String) -> String {
        let directory = TestAudio.path("state-\(name)-\(UUID().uuidString)")
        try? FileManager.default.removeItem(atPath: directory)
        return directory
    }

    @Test func aSavedStateComesBackWithItsIdsAndOffset() throws {
        let directory = freshDirectory("roundtrip")
        let entries = [
            SampleBufferPlayer.Entry(id: UUID(), item: PlaylistItem(location: "/music/a.flac", title: "A", artist: "Ann", album: "X", duration: MediaTime(value: 44_100 * 3, timescale: 44_100))),
            SampleBufferPlayer.Entry(id: UUID(), item: PlaylistItem(location: "http://example.invalid/b.mp3")),
            SampleBufferPlayer.Entry(id: UUID(), item: PlaylistItem(location: "/music/a.flac")),
        ]
        let state = PlayerStateStore.State(entries: entries, currentIndex: 2, offset: MediaTime(value: 1_250_000, timescale: 1_000_000), playbackState: .paused)
        try PlayerStateStore(directory: directory).save(state)
        // A second process opening the same directory sees it.
        #expect(try PlayerStateStore(directory: directory).load() == state)
        // Saving only the position keeps the playlist.
        let moved = PlayerStateStore.State(entries: entries, currentIndex: 0, offset: MediaTime(value: 7, timescale: 2), playbackState: .playing)
        try PlayerStateStore(directory: directory).savePosition(of: PlayerStateStore.State(entries: [], currentIndex: 0, offset: moved.offset, playbackState: .playing))
        #expect(try PlayerStateStore(directory: directory).load() == moved)
        // A new save replaces the whole playlist.
        let shorter = PlayerStateStore.State(entries: [entries[1]], currentIndex: nil, offset: .zero, playbackState: .stopped)
        try PlayerStateStore(directory: directory).save(shorter)
        #expect(try PlayerStateStore(directory: directory).load() == shorter)
    }

    @Test func anEmptyStoreHasNoState() throws {
        #expect(try PlayerStateStore(directory: freshDirectory("empty")).load() == nil)
    }

    @Test func aCorruptDatabaseIsNamedAndNeverReplaced() throws {
        let directory = freshDirectory("corrupt")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = PlayerStateStore.databasePath(inDirectory: directory)
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        try garbage.write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try PlayerStateStore(directory: directory)
        } throws: { error in
            let description = "\(error)"
            return description.contains(path) && description.contains("not a database")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage, "the corrupt file was changed")
    }

    @Test func theStateDirectoryFollowsXDG() {
        #expect(PlayerStateStore.defaultDirectory(environment: ["XDG_STATE_HOME": "/var/x", "HOME": "/home/u"]) == "/var/x/longform")
        #expect(PlayerStateStore.defaultDirectory(environment: ["HOME": "/home/u"]) == "/home/u/.local/state/longform")
        #expect(PlayerStateStore.defaultDirectory(environment: ["XDG_STATE_HOME": "relative", "HOME": "/home/u"]) == "/home/u/.local/state/longform")
    }
}
