import Foundation
import LongformCore
import LongformPlayer
import LongformRendering
import LongformRoutes
import LongformTestSupport
import Synchronization
import Testing

/// The player on a real-time route, the null route, whose monitor sees every period it renders:
/// what happens when the route already holds audio past an edit, and the events a client sees.
@Suite(.serialized) struct RealTimePlayerTests {
    /// A player on a mono 8 kHz null route, recording what the route renders: 50 ms periods, or
    /// 100 ms when it rewinds (room for its margin between a period's start and item 1's end).
    final class Rig: Sendable {
        let renderer: AudioRenderer
        let synchronizer = RenderSynchronizer()
        let player: SampleBufferPlayer
        let recording = HeardAudio(channelCount: 1)
        let stopped = DispatchSemaphore(value: 0)

        /// `canRewind` false: the route plays what it was handed, like a device that cannot take audio back.
        /// Rewinding, its margin is 20 ms: a rewind the route's thread takes later than its margin
        /// (a loaded machine) clips or repeats what was heard meanwhile, and these tests check every frame.
        /// `lookAhead`: how far ahead the route asks for audio.
        init(canRewind: Bool = true, lookAhead: Double = 60) throws {
            let recording = recording
            let route = NullRoute(sampleRate: CodedAudio.sampleRate, channelCount: 1, lookAhead: lookAhead, periodSeconds: canRewind ? 0.1 : 0.05,
                                  rewindMarginSeconds: canRewind ? 0.02 : nil) { firstFrame, _, samples in
                recording.record(firstFrame: firstFrame, samples: samples)
            }
            renderer = AudioRenderer(route: route)
            player = SampleBufferPlayer(renderer: renderer, synchronizer: synchronizer)
            try synchronizer.addRenderer(renderer)
            player.addEventHandler { [stopped] event in
                if event == .stateChanged(.stopped) { stopped.signal() }
            }
        }

        /// What was heard, without the silence before the first item and after the last.
        func heard() -> String {
            let frames = CodedAudio.frames(of: recording.samples)
            guard let first = frames.firstIndex(where: { $0 != .silence }), let last = frames.lastIndex(where: { $0 != .silence }) else { return "" }
            return CodedAudio.summary(frames[first...last])
        }

        func finish() {
            player.invalidate()
            synchronizer.removeRenderer(renderer, at: .invalid)
        }
    }

    final class EventLog: Sendable {
        let events = Mutex<[PlayerEvent]>([])
    }

    /// Plays items 1, 2 and 3 and removes item 2 while item 1 is still heard but the route
    /// already holds frames of item 2; returns what was heard.
    func removeTheNextItemWhileTheRouteHoldsIt(canRewind: Bool) throws -> String {
        // Item 1 ends at frame 7800, inside a route period (7600..<8000, or 7200..<8000 when the
        // route rewinds): while that period is heard, the route already holds frames of item 2.
        let items = [try CodedAudio.item(1, frames: 7_800), try CodedAudio.item(2, frames: 6_000), try CodedAudio.item(3, frames: 7_000)]
        let boundary = MediaTime(value: 7_800, timescale: 8_000)
        // The window (the route holds item 2 while item 1 is still heard) is under one period
        // long; a loaded machine can miss it, so the scenario is tried up to three times.
        var rig = try Rig(canRewind: canRewind)
        var removed = false
        for attempt in 1...3 where !removed {
            if attempt > 1 {
                rig.finish()
                rig = try Rig(canRewind: canRewind)
            }
            rig.player.append(items.map { PlaylistItem(location: $0) })
            rig.player.play()
            let clock = rig.renderer.route.clock
            // Removed at least 5 ms before the boundary can no longer be changed (the margin).
            let latest = boundary - MediaTime(value: 40 + (clock.rewindMarginFrames ?? 0), timescale: 8_000)
            let deadline = Date(timeIntervalSinceNow: 5)
            while Date() < deadline && rig.synchronizer.currentTime() < boundary {
                let now = rig.synchronizer.currentTime()
                let held = MediaTime(value: clock.framesRendered - clock.currentFrame(), timescale: 8_000)
                if now + held > boundary, now < latest {
                    try rig.player.remove(at: 1)
                    removed = true
                    break
                }
                Thread.sleep(forTimeInterval: 0.001)
            }
        }
        #expect(removed, "the route never held audio past the boundary while item 1 was heard")
        #expect(rig.stopped.wait(timeout: .now() + 10) == .success)
        rig.finish()
        return rig.heard()
    }

    @Test func anEditWhosePartialFlushIsRefusedGoesOnFromThePlayhead() throws {
        let heard = try removeTheNextItemWhileTheRouteHoldsIt(canRewind: false)
        // Item 1 is not restarted; the frames of item 2 the route already held (up to the end of
        // that period: 200 when the timeline started on the period grid, a few less when it started
        // a little after) are heard; item 3 follows from the playhead, whole.
        let held = heard.firstMatch(of: /^item 1 frames 0\.\.<7800, item 2 frames 0\.\.<(\d+), item 3 frames 0\.\.<7000$/).flatMap { Int($0.1) }
        #expect(held.map { (1...400).contains($0) } == true, "\(heard)")
    }

    @Test func aRouteThatCanRewindTakesBackTheRemovedItemItHeld() throws {
        let heard = try removeTheNextItemWhileTheRouteHoldsIt(canRewind: true)
        // The route renders again from the end of item 1: not a frame of item 2 is heard.
        #expect(heard == "item 1 frames 0..<7800, item 3 frames 0..<7000")
    }

    /// With a look-ahead shorter than an item, the item after the current one is opened ahead but
    /// not enqueued when `next` starts it, and the item play starts with is opened ahead while
    /// stopped. Each time the file is renamed away just before the command: the item is heard
    /// from its start only if it was really opened ahead, and not opened or sought again.
    @Test func itemsOpenedAheadPlayFromTheirStart() throws {
        let directory = TestAudio.path("opened-ahead-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Copies of their own, so that renaming them disturbs no other test.
        let items = try (1...3).map { code -> String in
            let copy = "\(directory)/\(code).flac"
            try FileManager.default.copyItem(atPath: try CodedAudio.item(code, frames: 16_000), toPath: copy)
            return copy
        }
        let away = items[1] + ".away"
        let rig = try Rig(canRewind: false, lookAhead: 0.8)
        defer { rig.finish() }
        rig.player.append(items.map { PlaylistItem(location: $0) })
        func waitUntilHeard(_ seconds: Double) {
            let deadline = Date(timeIntervalSinceNow: 5)
            while (rig.player.currentOffset?.seconds ?? 0) < seconds && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            #expect((rig.player.currentOffset?.seconds ?? 0) >= seconds, "the player did not reach \(seconds) s")
        }
        rig.player.play()
        waitUntilHeard(0.3)
        try FileManager.default.moveItem(atPath: items[1], toPath: away)
        rig.player.next()
        waitUntilHeard(0.3)
        try FileManager.default.moveItem(atPath: away, toPath: items[1])
        rig.player.stop()
        #expect(rig.stopped.wait(timeout: .now() + 1) == .success)
        Thread.sleep(forTimeInterval: 0.3)
        try FileManager.default.moveItem(atPath: items[1], toPath: away)
        rig.player.play()
        #expect(rig.stopped.wait(timeout: .now() + 10) == .success)
        // Item 1 and then item 2 cut short (the route plays out the period it holds); from the
        // play on, item 2 from its start and item 3, whole.
        let heard = rig.heard()
        #expect(heard.firstMatch(of: /^item 1 frames 0\.\.<\d+, (silence ×\d+, )?item 2 frames 0\.\.<\d+, silence ×\d+, item 2 frames 0\.\.<16000, item 3 frames 0\.\.<16000$/) != nil, "\(heard)")
        #expect(rig.player.entries.allSatisfy { $0.failure == nil }, "\(rig.player.entries)")
    }

    @Test func eventsReportItemsOffsetsAndRatesInOrder() async throws {
        let items = [try CodedAudio.item(4, frames: 8_000), try CodedAudio.item(5, frames: 4_000)]
        let rig = try Rig()
        let events = rig.player.events()
        let callbacks = EventLog()
        rig.player.addEventHandler { event in callbacks.events.withLock { $0.append(event) } }
        rig.player.append(items.map { PlaylistItem(location: $0) })
        let ids = rig.player.entries.map(\.id)
        rig.player.play()
        var received: [PlayerEvent] = []
        for await event in events {
            received.append(event)
            if event == .stateChanged(.stopped) { break }
        }
        rig.finish()
        #expect(received == callbacks.events.withLock { $0 }, "the async sequence and the callbacks saw different events")
        let changes = received.filter { if case .currentItemChanged = $0 { true } else { false } }
        #expect(changes == [.currentItemChanged(index: 0, id: ids[0]), .currentItemChanged(index: 1, id: ids[1]), .currentItemChanged(index: nil, id: nil)])
        let rates = received.compactMap { if case .rateChanged(let rate) = $0 { rate } else { nil } }
        #expect(rates == [1, 0])
        // 1.5 s of playback, reported every 0.1 s: about 15 offsets, rising within each item.
        let offsets = received.compactMap { if case .offsetChanged(let offset) = $0 { offset.seconds } else { nil } }
        #expect((12...20).contains(offsets.count), "\(offsets)")
        #expect(offsets.max() ?? 0 <= 1.0 + 1e-9 && offsets.max() ?? 0 > 0.8, "\(offsets)")
        #expect(rig.heard() == "item 4 frames 0..<8000, item 5 frames 0..<4000")
    }

    /// A URL item skipped while its reader waits on a trickling server gives its connection up at
    /// once: the reader is closed with the item taken off the timeline, and its read (here the
    /// opening, which waits for more than the trickle's first 20 KB) is cancelled.
    @Test func aSkippedURLItemGivesItsConnectionUpAtOnce() throws {
        let rig = try Rig()
        defer { rig.finish() }
        let mp3 = try TestAudio.encode(try TestAudio.reference("skip-url", seconds: 4.0, startFrequency: 500), as: "mp3",
                                       arguments: ["-c:a", "libmp3lame", "-b:a", "128k"])
        let name = (mp3 as NSString).lastPathComponent
        // About a second of audio, then a byte every 0.2 s: the reader waits in a read that never ends.
        let url = try HTTPFileServer.start() + "trickle/20480/0.2/" + name
        // Titled, so that the player does not open it a second time for its tags.
        rig.player.append([PlaylistItem(location: url, title: "Trickle"), PlaylistItem(location: try CodedAudio.item(1, frames: 40_000))])
        rig.player.play()
        var deadline = Date().addingTimeInterval(3)
        while HTTPFileServer.openConnectionCount(to: name) == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        Thread.sleep(forTimeInterval: 0.5)
        #expect(HTTPFileServer.openConnectionCount(to: name) == 1, "the URL item is read over one connection")
        rig.player.next()
        deadline = Date().addingTimeInterval(2)
        while HTTPFileServer.openConnectionCount(to: name) > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(HTTPFileServer.openConnectionCount(to: name) == 0, "the skipped item still holds its connection")
        #expect(rig.player.currentIndex == 1)
    }

}
