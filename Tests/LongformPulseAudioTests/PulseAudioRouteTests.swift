import Foundation
import LongformCore
import LongformLocalRouteCatalog
import LongformPlayer
import LongformPulseAudio
import LongformRendering
import LongformRouteCatalog
import LongformRoutes
import LongformSources
import LongformTestSupport
import Testing

/// Playing to a real PulseAudio server (started by the tests, with a null sink) and finding the
/// expected audio on the sink's monitor.
@Suite(.serialized) struct PulseAudioRouteTests {

    /// Where `needle` best matches `haystack` (left channel), and the largest sample difference there.
    static func locate(_ needle: [Int32], in haystack: [Int32]) -> (offset: Int, maximumDifference: Int32)? {
        // Anchor on the needle's first loud sample, then check the whole needle at each candidate.
        guard let anchor = stride(from: 0, to: needle.count, by: 2).first(where: { abs(needle[$0]) > 2_000 }) else { return nil }
        var best: (Int, Int32)?
        for start in stride(from: 0, to: haystack.count - needle.count, by: 2) where abs(haystack[start + anchor] - needle[anchor]) <= 2 {
            var worst: Int32 = 0
            for index in stride(from: 0, to: needle.count, by: 2) {
                worst = max(worst, abs(haystack[start + index] - needle[index]))
                if worst > 64 { break }
            }
            if best.map({ worst < $0.1 }) ?? true { best = (start / 2, worst) }
            if worst <= 1 { break }
        }
        return best
    }

    // ALSA reaches this server through ALSA's PulseAudio plugin, but that plugin's writes
    // sometimes never return on this VM (stuck in its own mainloop after the server's start-up
    // stall), so the ALSA route is tested here only for its errors (RouteSpecifierTests).
    @Test func playingToThePulseAudioSinkComesOutOfItsMonitor() throws {
        let server = try PulseAudioServer.start()
        let reference = try TestAudio.reference("pulse-ref", seconds: 1.5, startFrequency: 440)
        let flac = try TestAudio.encode(reference, as: "flac", arguments: ["-c:a", "flac"])
        let monitor = try MonitorRecording(server: server)
        let recordedBeforePlaying = monitor.byteCount
        let started = Date()
        let engine = PlaybackEngine(route: PulseAudioRoute(sink: PulseAudioServer.sinkName), readsTagsAhead: false)
        _ = try PlaylistRun.run([PlaylistItem(location: flac)], on: engine)
        let elapsed = Date().timeIntervalSince(started)
        // parec's capture runs behind real time by its own start-up: stop it once the file covers
        // the whole time the item played, and a little more.
        let heard = monitor.finish(covering: recordedBeforePlaying + Int((elapsed + 0.5) * 44_100) * 4)

        // Real time, give or take the server's start: this VM's PulseAudio can take a second to
        // start a new stream (paplay shows the same), and the timeline waits for it.
        #expect(elapsed > 1.4 && elapsed < 5, "1.5 s of audio took \(elapsed) s")
        let expected = try WAVFileReader(path: reference).integerSamples
        let match = Self.locate(expected, in: heard)
        #expect(match != nil, "the reference was not found in \(heard.count / 2) frames recorded from the monitor")
        // Float32 → the sink's 16-bit: at most one step of rounding, over every frame of the item.
        if let match, match.maximumDifference > 1 {
            let frame = stride(from: 0, to: expected.count, by: 2).first { abs(heard[match.offset * 2 + $0] - expected[$0]) > 1 }.map { $0 / 2 } ?? -1
            let around = (max(0, frame - 3)..<min(expected.count / 2, frame + 3)).map { "\(heard[(match.offset + $0) * 2])/\(expected[$0 * 2])" }
            Issue.record("the monitor differs from the reference from frame \(frame) of the item (heard/expected: \(around)); the renderer ran dry for \(engine.renderer.underrunFrameCount) frames")
        }
    }

    @Test func thePulseClockRunsAtTheSinksRateBehindWhatWasWritten() throws {
        let (route, renderer, synchronizer) = try Self.playback()
        renderer.enqueue(SampleBuffer(pcmFormat: AudioFormat(sampleRate: 44_100, channelCount: 2), planes: [[UInt8](repeating: 0, count: 44_100 * 8 * 6)],
                                      frameCount: 44_100 * 6, presentationTime: .zero))
        synchronizer.setRate(1, time: .zero)
        // Let the stream get past its start (see above), then measure one second of it.
        Thread.sleep(forTimeInterval: 2.5)
        let firstHost = HostClock.now()
        let first = synchronizer.currentTime().seconds
        Thread.sleep(forTimeInterval: 1.0)
        let second = synchronizer.currentTime().seconds
        let elapsed = Double(HostClock.now() - firstHost) / 1e9
        let written = Double(route.clock.framesRendered) / 44_100
        synchronizer.removeRenderer(renderer, at: .invalid)
        #expect(abs((second - first) - elapsed) < 0.03, "the timeline moved \(second - first) s in \(elapsed) s")
        // What was handed to the server runs ahead of what the sink plays by the buffer it holds
        // and the sink's own latency.
        #expect(written - second > 0.02 && written - second < route.bufferDuration + 1, "written \(written) s, heard \(second) s")
    }

    /// At a start the server holds only the preroll, and the route sleeps until it is nearly
    /// played: audio queued meanwhile is written at once, so that a route thread that wakes late
    /// under load does not run the server dry (heard as a gap a second into the item).
    @Test func audioQueuedAfterAStartIsWrittenAtOnce() throws {
        let (route, renderer, synchronizer) = try Self.playback()
        defer { synchronizer.removeRenderer(renderer, at: .invalid) }
        // Past the stream's start (up to 2 s on this VM), as a player that has played before.
        let started = Date(timeIntervalSinceNow: 5)
        while !route.clock.isRunning && Date() < started { Thread.sleep(forTimeInterval: 0.005) }
        let preroll = 44_100 * 6 / 10
        // More is coming (a request stands), so the route writes no silence past the preroll.
        renderer.requestMediaDataWhenReady(on: DispatchQueue(label: "test.source")) {}
        defer { renderer.stopRequestingMediaData() }
        // As a player starts: the silence the route wrote while nothing played is taken back.
        renderer.batchingRewinds {
            renderer.enqueue(Self.constant(0.25, frames: preroll, at: .zero))
            synchronizer.setRate(1, time: .zero)
        }
        func held() -> Int64 { route.clock.framesRendered - route.clock.currentFrame() }
        let deadline = Date(timeIntervalSinceNow: 5)
        while synchronizer.currentTime().seconds < 0.02 && Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
        #expect(held() < 44_100 * 7 / 10, "the server held \(held()) frames of a preroll of \(preroll)")
        renderer.enqueue(Self.constant(0.25, frames: 44_100 * 3, at: MediaTime(value: Int64(preroll), timescale: 44_100)))
        // Without the wake-up the route writes again only when 50 ms of the preroll are left.
        while held() < 44_100 * 3 / 2 && Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
        let heard = synchronizer.currentTime().seconds
        #expect(held() >= 44_100 * 3 / 2 && heard < 0.45, "the server held \(held()) frames at \(heard) s")
    }

    @Test func aCutIsHeardAtOnceThoughTheServerHoldsSeconds() throws {
        try Self.checkThatACutIsHeardAtOnce(recorderLatencyMilliseconds: 20)
    }

    /// The same with the monitor recorded at a latency of 2 s, so that no other stream asks the
    /// sink for less than the route does (as when nothing records): a sink that rendered a second
    /// ahead would play on a second past the cut, which no flush takes back.
    @Test func aCutIsHeardAtOnceWhenNoOtherStreamAsksTheSinkForALowLatency() throws {
        try Self.checkThatACutIsHeardAtOnce(recorderLatencyMilliseconds: 2_000)
    }

    /// Plays level A, cuts it from the playhead a second in for level B, and checks the monitor:
    /// A up to the cut, then B, nothing of A after it.
    static func checkThatACutIsHeardAtOnce(recorderLatencyMilliseconds: Int) throws {
        let (monitor, route, renderer, synchronizer) = try Self.recordedPlayback(recorderLatencyMilliseconds: recorderLatencyMilliseconds)
        let recordedBeforePlaying = monitor.byteCount
        // 6 s at level A; once 1 s is heard, everything from the playhead on becomes 1 s at level B.
        renderer.enqueue(Self.constant(0.25, frames: 44_100 * 6, at: .zero))
        synchronizer.setRate(1, time: .zero)
        let deadline = Date(timeIntervalSinceNow: 5)
        while synchronizer.currentTime().seconds < 1 && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        #expect(route.clock.framesRendered - route.clock.currentFrame() > 44_100 / 2, "the server held less than half a second")
        let cut = renderer.flushFromPlayhead(notBefore: .zero)
        renderer.enqueue(Self.constant(0.5, frames: 44_100, at: cut))
        Thread.sleep(forTimeInterval: 2)
        synchronizer.removeRenderer(renderer, at: .invalid)
        // Up to B's end and a little more, counted from the recording's bytes before the stream
        // started: the stream's start (up to 2 s on this VM under the whole suite's load) comes
        // before A's first frame, so a recording stopped 0.2 s past B's nominal end can cut B's
        // end off (43,583 of its 44,100 frames came out once, in a clean-clone run).
        let samples = monitor.finish(covering: recordedBeforePlaying + Int((cut.seconds + 1.2 + 2.5) * 44_100) * 4)
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        let levelA: Int32 = 8_192, levelB: Int32 = 16_384
        let firstB = try #require(left.firstIndex { abs($0 - levelB) <= 1 }, "level B never came out")
        let lastB = try #require(left.lastIndex { abs($0 - levelB) <= 1 })
        #expect(lastB < left.count - 4_410, "the recording ends only \(left.count - 1 - lastB) frames after B's last: B may be cut short")
        let framesOfA = left.filter { abs($0 - levelA) <= 1 }.count
        let framesOfB = left.filter { abs($0 - levelB) <= 1 }.count
        #expect(!left[firstB...].contains { abs($0 - levelA) <= 1 }, "level A came out after level B: the server played what it held")
        #expect(abs(Double(framesOfA) / 44_100 - cut.seconds) < 0.05, "\(framesOfA) frames of A came out for a cut at \(cut.seconds) s")
        // B follows within a few milliseconds of where the cut was asked for: at most that much of it is lost.
        #expect(framesOfB <= 44_100 && framesOfB > 44_100 - 441, "\(framesOfB) frames of B came out of 44100, from frame \(firstB) to \(lastB) of the recording (A's last: \(left[..<firstB].lastIndex { abs($0 - levelA) <= 1 } ?? -1))")
    }

    /// Pausing and resuming on a server that holds seconds: every frame comes out once (the
    /// stream waits for the write after a flush, so a late one is heard late, not lost).
    @Test func aPauseAndAResumeLoseAndRepeatNothing() throws {
        let (monitor, _, renderer, synchronizer) = try Self.recordedPlayback()
        let frames = 44_100 * 3, period = Self.countingPeriod
        renderer.enqueue(Self.counting(frames: frames))
        synchronizer.setRate(1, time: .zero)
        func wait(untilSeconds seconds: Double) { Self.wait(for: synchronizer, untilSeconds: seconds) }
        wait(untilSeconds: 1)
        // A pause of a second (the route writes silence meanwhile, and takes it back at the
        // resume), then one of a millisecond (the resume lands in what the pause took back).
        synchronizer.setRate(0, time: .invalid)
        Thread.sleep(forTimeInterval: 1)
        synchronizer.setRate(1, time: .invalid)
        wait(untilSeconds: 2)
        synchronizer.setRate(0, time: .invalid)
        Thread.sleep(forTimeInterval: 0.001)
        synchronizer.setRate(1, time: .invalid)
        wait(untilSeconds: 3)
        Thread.sleep(forTimeInterval: 0.3)
        synchronizer.removeRenderer(renderer, at: .invalid)
        let recorded = monitor.finish(covering: 0)
        let left = stride(from: 0, to: recorded.count, by: 2).map { recorded[$0] }

        // Every frame came out once, in order: nothing lost or repeated at either resume.
        let heard = left.filter { $0 != 0 }
        #expect(heard.count == frames, "\(heard.count) frames came out of \(frames)")
        let breaks = zip(heard, heard.dropFirst()).enumerated().filter { $0.element.1 != $0.element.0 % Int32(period) + 1 }
        #expect(breaks.isEmpty, "the ramp breaks at \(breaks.prefix(3).map { "frame \($0.offset): \($0.element.0) → \($0.element.1)" })")
        // The long pause is heard as one silence of about its length: the resume took back the
        // silence the route had written ahead.
        let longestSilence = try #require(Self.longestSilence(in: left))
        #expect(abs(Double(longestSilence) / 44_100 - 1) < 0.05, "the one-second pause came out as \(Double(longestSilence) / 44_100) s of silence")
    }

    /// A stream the server kills (as `pactl kill-sink-input` does, or a sink that goes away) is
    /// opened again at once, and the route plays on from the frame the server was about to play:
    /// before, the route's thread ended and it stayed silent for good.
    @Test func aStreamTheServerKillsIsOpenedAgainAndPlaysOnFromWhereItStopped() throws {
        let server = try PulseAudioServer.start()
        // A sink of its own, so that the stream killed is the route's.
        let sink = "longform_reopen_\(UUID().uuidString.prefix(8))"
        let module = try ExternalTool.check("pactl", ["--server", server, "load-module", "module-null-sink", "sink_name=\(sink)", "rate=44100",
                                                      "channels=2", "norewinds=1"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        defer { _ = try? ExternalTool.run("pactl", ["--server", server, "unload-module", module]) }
        let monitor = try MonitorRecording(server: server, source: sink + ".monitor")
        let renderer = AudioRenderer(route: PulseAudioRoute(sink: sink))
        let synchronizer = RenderSynchronizer()
        try synchronizer.addRenderer(renderer)
        let frames = 44_100 * 4, period = Self.countingPeriod
        renderer.enqueue(Self.counting(frames: frames))
        synchronizer.setRate(1, time: .zero)
        Self.wait(for: synchronizer, untilSeconds: 1.5)
        #expect(try PulseAudioServer.killStreams(on: sink, server: server) == 1)
        Self.wait(for: synchronizer, untilSeconds: 4, timeout: 10)
        Thread.sleep(forTimeInterval: 0.3)
        synchronizer.removeRenderer(renderer, at: .invalid)
        let recorded = monitor.finish(covering: 0)
        let left = stride(from: 0, to: recorded.count, by: 2).map { recorded[$0] }

        // The ramp breaks once, where the stream was killed, and goes on from about where it
        // stopped: what the sink had taken ahead of the frame heard (its latency, 25 ms asked
        // for) is the most that may be lost or repeated.
        let heard = left.filter { $0 != 0 }
        let breaks = zip(heard, heard.dropFirst()).enumerated().filter { $0.element.1 != $0.element.0 % Int32(period) + 1 }
        let skips = breaks.map { Int(($0.element.1 - $0.element.0 - 1 + Int32(period) * 3 / 2) % Int32(period)) - period / 2 }
        #expect(breaks.count <= 1, "the ramp breaks at \(breaks.prefix(3).map { "frame \($0.offset): \($0.element.0) → \($0.element.1)" })")
        #expect(skips.allSatisfy { abs($0) <= 2_205 }, "frames lost (+) or repeated (−) where the stream was killed: \(skips)")
        #expect(abs(heard.count - frames) <= 2_205, "\(heard.count) frames came out of \(frames)")
        // The stream was open again within half a second.
        let longestSilence = try #require(Self.longestSilence(in: left))
        #expect(longestSilence < 22_050, "the route was silent for \(Double(longestSilence) / 44_100) s after its stream was killed")
    }

    /// A route given a memory of device rates keeps the rate it measured there once trusted, and
    /// the next route to the same device runs at the remembered rate from its first report (a
    /// speaker restarted beside rooms already playing), not at the nominal one.
    @Test func aRouteKeepsItsDevicesRateAndTheNextRouteToItStartsThere() throws {
        let server = try PulseAudioServer.start()
        let sink = "longform_rates_\(UUID().uuidString.prefix(8))"
        let module = try ExternalTool.check("pactl", ["--server", server, "load-module", "module-null-sink", "sink_name=\(sink)", "rate=44100",
                                                      "channels=2"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        defer { _ = try? ExternalTool.run("pactl", ["--server", server, "unload-module", module]) }
        let memory = DeviceRateMemory(directory: TestAudio.path("device-rates-\(UUID().uuidString.prefix(8))"))
        func play(seconds: Double, until done: (PulseAudioRoute) -> Bool) -> PulseAudioRoute {
            let route = PulseAudioRoute(sink: sink, flushBehavior: .keepsTime, rateMemory: memory)
            let renderer = AudioRenderer(route: route)
            let synchronizer = RenderSynchronizer()
            try? synchronizer.addRenderer(renderer)
            renderer.enqueue(SampleBuffer(pcmFormat: AudioFormat(sampleRate: 44_100, channelCount: 2), planes: [[UInt8](repeating: 0, count: 44_100 * 8 * Int(seconds))],
                                          frameCount: 44_100 * Int(seconds), presentationTime: .zero))
            synchronizer.setRate(1, time: .zero)
            let deadline = Date(timeIntervalSinceNow: seconds)
            while !done(route) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            synchronizer.removeRenderer(renderer, at: .invalid)
            route.stop(waiting: true)
            memory.waitUntilWritten()
            return route
        }
        // Until the route's fit is settled (resting on no report of the stream's first 10 s: 20 s).
        func keptFiles() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: memory.directory)) ?? [] }
        _ = play(seconds: 30) { _ in !keptFiles().isEmpty }
        let file = try #require(keptFiles().first, "no rate kept after 30 s of playing")
        let lines = try String(contentsOfFile: memory.directory + "/" + file, encoding: .utf8).split(separator: "\n")
        let key = String(try #require(lines.last))
        #expect(key.contains(sink) && key.hasSuffix(" 44100 Hz"), "kept for \(key)")
        let measured = try #require(memory.rate(ofDevice: key), "\(lines)")
        #expect(abs(measured - 1) < 200e-6, "the null sink measured \((measured - 1) * 1e6) ppm off the host clock")

        // Remembered 50 ppm fast: the next route gives that rate from its first report on.
        memory.remember(1 + 50e-6, ofDevice: key)
        memory.waitUntilWritten()
        var firstRates: [Double] = []
        _ = play(seconds: 3) { route in
            if route.clock.isRunning { firstRates.append(route.clock.rate) }
            return firstRates.count >= 100
        }
        #expect(!firstRates.isEmpty, "the second route's clock never ran")
        #expect(firstRates.allSatisfy { abs($0 - (1 + 50e-6)) < 1e-9 }, "rates in the second route's first second: \(Set(firstRates).sorted())")
    }

    /// Restarts at media time 0, as the player's next or remove does: the route resumes a little
    /// before the frame the restart changes, and what it plays there is what it played before, not
    /// the new audio that now sits at the old timeline's media times (before, a few milliseconds of
    /// the new item from where the old one had reached came out ahead of its start).
    @Test func aRestartAtTheSameMediaTimesPlaysNothingOfTheNewAudioBeforeItsStart() throws {
        let (monitor, _, renderer, synchronizer) = try Self.recordedPlayback()
        // Each restart plays 2 s at its own level from media time 0 (the first starts playback);
        // the next comes 0.35 s after the one before (after the first, once playback has begun),
        // so that its audio covers the media times the old timeline is at.
        let levels: [Int32] = [2_048, 4_096, 6_144, 8_192, 10_240, 12_288, 14_336]
        for level in levels {
            renderer.batchingRewinds {
                synchronizer.setRate(0, time: .invalid)
                renderer.flush()
                renderer.enqueue(Self.constant(Float(level) / 32_768, frames: 44_100 * 2, at: .zero))
                synchronizer.setRate(1, time: .zero)
            }
            // (The timeline's time says little after the first: until a start is heard it is the old one's.)
            let deadline = Date(timeIntervalSinceNow: 5)
            while level == levels[0] && synchronizer.currentTime().seconds <= 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
            Thread.sleep(forTimeInterval: 0.35)
        }
        Thread.sleep(forTimeInterval: 0.8)
        synchronizer.removeRenderer(renderer, at: .invalid)
        let samples = monitor.finish(covering: 0)
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        // What came out, as runs of one value. Each level comes out in order, and its first run is
        // its start, 0.3 s of it, not a few milliseconds of it from where the old one had reached
        // (up to 607 frames, followed by the restart's silence, before the fix). An old level may
        // come out in two pieces: on a sink that cannot rewind, a write that reaches the server
        // after the sink rendered past a flush is heard after that much silence (under two busy
        // loops, one run in eight: 568 frames written again from the copy, after the gap).
        var runs: [(value: Int32, frames: Int)] = []
        for sample in left {
            if let last = runs.last, last.value == sample { runs[runs.count - 1].frames += 1 } else { runs.append((sample, 1)) }
        }
        let levelRuns = runs.filter { $0.value != 0 }
        let described = levelRuns.map { "\($0.frames) × \($0.value)" }
        var firstRuns: [(value: Int32, frames: Int)] = []
        for run in levelRuns where !firstRuns.contains(where: { $0.value == run.value }) { firstRuns.append(run) }
        #expect(firstRuns.map(\.value) == levels, "levels came out as \(described)")
        #expect(firstRuns.allSatisfy { $0.frames >= 44_100 / 5 }, "a level came out first in a stretch under 0.2 s: \(described)")
    }

    /// The counting ramp's period: its left samples count 1, 2, … 30,000, 1, 2, …
    static let countingPeriod = 30_000

    /// `frames` of the counting ramp from media time 0: every frame is told apart from its
    /// neighbours and from silence.
    static func counting(frames: Int) -> SampleBuffer {
        let samples = (0..<frames).flatMap { frame -> [Float] in
            let value = Float(1 + frame % countingPeriod) / 32_768
            return [value, value]
        }
        return SampleBuffer(pcmFormat: AudioFormat(sampleRate: 44_100, channelCount: 2), planes: [samples.withUnsafeBytes { Array($0) }],
                            frameCount: frames, presentationTime: .zero)
    }

    /// The longest run of silent samples between the first sound in `samples` and the last (nil: no sound).
    static func longestSilence(in samples: [Int32]) -> Int? {
        guard let first = samples.firstIndex(where: { $0 != 0 }), let last = samples.lastIndex(where: { $0 != 0 }) else { return nil }
        var longest = 0, run = 0
        for sample in samples[first...last] {
            run = sample == 0 ? run + 1 : 0
            longest = max(longest, run)
        }
        return longest
    }

    /// Waits until `synchronizer`'s time reaches `seconds`, or `timeout` seconds have passed.
    static func wait(for synchronizer: RenderSynchronizer, untilSeconds seconds: Double, timeout: Double = 6) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while synchronizer.currentTime().seconds < seconds && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
    }

    /// A renderer and synchronizer playing to the test server's sink, and its monitor recorded.
    static func recordedPlayback(recorderLatencyMilliseconds: Int = 20) throws -> (MonitorRecording, PulseAudioRoute, AudioRenderer, RenderSynchronizer) {
        let monitor = try MonitorRecording(server: try PulseAudioServer.start(), latencyMilliseconds: recorderLatencyMilliseconds)
        let (route, renderer, synchronizer) = try playback()
        return (monitor, route, renderer, synchronizer)
    }

    /// The test server started, and a renderer on a route to its sink, on a synchronizer of its own.
    static func playback() throws -> (PulseAudioRoute, AudioRenderer, RenderSynchronizer) {
        _ = try PulseAudioServer.start()
        let route = PulseAudioRoute(sink: PulseAudioServer.sinkName)
        let renderer = AudioRenderer(route: route)
        let synchronizer = RenderSynchronizer()
        try synchronizer.addRenderer(renderer)
        return (route, renderer, synchronizer)
    }

    /// A stereo Float32 buffer at 44.1 kHz, every sample `value`, starting at `time`.
    static func constant(_ value: Float, frames: Int, at time: MediaTime) -> SampleBuffer {
        let samples = [Float](repeating: value, count: frames * 2)
        return SampleBuffer(pcmFormat: AudioFormat(sampleRate: 44_100, channelCount: 2), planes: [samples.withUnsafeBytes { Array($0) }],
                            frameCount: frames, presentationTime: time.convertScale(44_100, method: .roundHalfAwayFromZero))
    }

    @Test func theRouteCatalogFindsTheServersSinks() throws {
        _ = try PulseAudioServer.start()
        let routes = RouteCatalog.availableRoutes().map(\.specifier)
        #expect(routes.contains(.pulse(sink: PulseAudioServer.sinkName)))
        #expect(routes.contains(.null))
        #expect(RouteCatalog.defaultRoute(fallback: .wav(path: "x.wav")) == .pulse(sink: nil))
        let listed = try ExternalTool.run(ExternalTool.longformExecutable, ["routes"])
        #expect(listed.output.contains("pulse:\(PulseAudioServer.sinkName)"))
    }

    @Test func anUnreachableServerIsAClearError() throws {
        setenv("PULSE_SERVER", "unix:/nonexistent/socket", 1)
        defer { _ = try? PulseAudioServer.start(); if let server = try? PulseAudioServer.start() { setenv("PULSE_SERVER", server, 1) } }
        let route = PulseAudioRoute()
        #expect { try route.start(pullingFrom: AudioRenderer(route: NullRoute())) } throws: { error in
            (error as! RouteError).description.hasPrefix("pulse")
        }
    }
}
