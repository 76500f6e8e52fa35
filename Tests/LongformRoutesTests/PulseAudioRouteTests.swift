import Foundation
import LongformCore
import LongformPlayer
import LongformRendering
import LongformRoutes
import LongformSources
import LongformTestSupport
import Testing

/// Playing to a real PulseAudio server (started by the tests, with a null sink) and finding the
/// expected audio on the sink's monitor.
@Suite(.serialized) struct PulseAudioRouteTests {
    static func size(of path: String) -> Int { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }

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
        // Raw 16-bit PCM to a file, ended with SIGKILL: a child of the test process inherits its
        // blocked signal mask, so parec would not see SIGINT or SIGTERM; raw output needs no header.
        let recording = TestAudio.path("pulse-monitor.raw")
        FileManager.default.createFile(atPath: recording, contents: nil)
        let recorder = Process()
        recorder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        recorder.arguments = ["parec", "-d", "\(PulseAudioServer.sinkName).monitor", "--format=s16le", "--rate=44100", "--channels=2", "--raw", "--latency-msec=20"]
        recorder.environment = ProcessInfo.processInfo.environment.merging(["PULSE_SERVER": server]) { $1 }
        recorder.standardInput = FileHandle.nullDevice
        recorder.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: recording))
        try recorder.run()
        // Play only once parec really captures (the monitor's silence arrives): a new stream on this
        // VM's PulseAudio can take a second to start.
        let recordingStarted = Date(timeIntervalSinceNow: 5)
        while Self.size(of: recording) < 44_100 && Date() < recordingStarted {
            Thread.sleep(forTimeInterval: 0.02)
        }

        let recordedBeforePlaying = Self.size(of: recording)
        let started = Date()
        let renderer = AudioRenderer(route: PulseAudioRoute(sink: PulseAudioServer.sinkName))
        _ = try PlaylistRun.run([PlaylistItem(location: flac)], renderer: renderer, synchronizer: RenderSynchronizer())
        let elapsed = Date().timeIntervalSince(started)
        // parec's capture runs behind real time by its own start-up: stop it once the file covers
        // the whole time the item played, and a little more.
        let covered = recordedBeforePlaying + Int((elapsed + 0.5) * 44_100) * 4
        let recordingEnds = Date(timeIntervalSinceNow: 10)
        while Self.size(of: recording) < covered && Date() < recordingEnds { Thread.sleep(forTimeInterval: 0.05) }
        kill(recorder.processIdentifier, SIGKILL)
        recorder.waitUntilExit()

        // Real time, give or take the server's start: this VM's PulseAudio can take a second to
        // start a new stream (paplay shows the same), and the timeline waits for it.
        #expect(elapsed > 1.4 && elapsed < 5, "1.5 s of audio took \(elapsed) s")
        let raw = try Data(contentsOf: URL(fileURLWithPath: recording))
        let heard = raw.withUnsafeBytes { bytes in bytes.bindMemory(to: Int16.self).map { Int32($0) } }
        let expected = try WAVFileReader(path: reference).integerSamples
        let match = Self.locate(expected, in: heard)
        #expect(match != nil, "the reference was not found in \(heard.count / 2) frames recorded from the monitor")
        // Float32 → the sink's 16-bit: at most one step of rounding, over every frame of the item.
        if let match { #expect(match.maximumDifference <= 1, "the monitor differs from the reference by \(match.maximumDifference) at offset \(match.offset)") }
    }

    @Test func thePulseClockRunsAtTheSinksRateBehindWhatWasWritten() throws {
        _ = try PulseAudioServer.start()
        let route = PulseAudioRoute(sink: PulseAudioServer.sinkName, targetLatency: 0.2)
        let renderer = AudioRenderer(route: route)
        let synchronizer = RenderSynchronizer()
        try synchronizer.addRenderer(renderer)
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
        // What was handed to the server runs ahead of what the sink plays by the server's latency.
        #expect(written - second > 0.02 && written - second < 1.0, "written \(written) s, heard \(second) s")
    }

    @Test func theRouteCatalogFindsTheServersSinks() throws {
        _ = try PulseAudioServer.start()
        let routes = RouteCatalog.availableRoutes().map(\.specifier)
        #expect(routes.contains(.pulse(sink: PulseAudioServer.sinkName)))
        #expect(routes.contains(.null))
        #expect(RouteCatalog.defaultRoute(fallbackWAVPath: "x.wav") == .pulse(sink: nil))
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
