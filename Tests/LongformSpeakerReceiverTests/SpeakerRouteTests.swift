import Foundation
import LongformTestSupport
import Testing

/// The engine's `speaker:` route, end to end: a sender process (`longform play`, `longform serve`)
/// and speaker processes on loopback, checked by what each speaker wrote to its WAV route.
@Suite(.serialized) struct SpeakerRouteTests {
    @Test(arguments: [nil, "float", "pcm"])
    func playToAGroupOfTwoSpeakersPlaysEveryFrameOnEach(codec: String?) throws {
        let ramp = try RampAudio.file(named: "route-ramp-5s", seconds: 5)
        let speakers = try ["kitchen", "hall"].map { try SpeakerProcess(name: $0) }
        defer { speakers.forEach { $0.stop() } }
        let play = try SpeakerProcess.play(ramp, to: speakers, codec: codec)
        #expect(play.status == 0, "\(play.output)\(play.errorOutput)")
        Thread.sleep(forTimeInterval: 0.5)
        for speaker in speakers {
            speaker.stop()
            #expect(speaker.output.contains("now playing route-ramp-5s.wav"), "\(speaker.output)")
            let encoding = ["float": "float32", "pcm": "signed16"][codec ?? ""] ?? "flac"
            #expect(speaker.output.contains("44100 Hz, 2 channels, \(encoding)"), "\(speaker.output)")
            // One piece, frame 1 to the last (frame 0 is 0, not told from the silence before it).
            let played = try RampAudio.played(wav: speaker.outputPath)
            let piece = try #require(played.pieces.first, "\(speaker.outputPath): nothing played")
            #expect(played.pieces.count == 1 && piece.isContinuous(tolerance: 2), "\(speaker.outputPath): \(played)")
            #expect(abs(piece.count - (5 * 44_100 - 1)) <= 45 + RampAudio.resamplingAllowance(piece.count) && piece.values.first == 1, "\(speaker.outputPath): \(played)")
        }
    }

    @Test func aBitExactSpeakerWritesTheSourceSampleForSampleWithFLACOnTheWire() throws {
        // Two sweeps, one a channel, so that a channel swapped, a frame lost or repeated, a
        // sample resampled or rounded shows.
        let source = try TestAudio.reference("bit-exact-source", seconds: 8)
        let speaker = try SpeakerProcess(name: "study", extraArguments: ["--bit-exact"])
        defer { speaker.stop() }
        let play = try SpeakerProcess.play(source, to: [speaker])
        #expect(play.status == 0, "\(play.output)\(play.errorOutput)")
        Thread.sleep(forTimeInterval: 0.5)
        speaker.stop()
        #expect(speaker.output.contains("44100 Hz, 2 channels, flac"), "\(speaker.output)")
        let expected = try WAVFileReader(path: source).integerSamples
        let played = try WAVFileReader(path: speaker.outputPath).integerSamples
        // Aligned on the first sound, a whole frame: the speaker starts on one and never reads between.
        let firstSound = { (samples: [Int32]) in samples.firstIndex { $0 != 0 }.map { $0 - $0 % 2 } }
        let sourceStart = try #require(firstSound(expected)), playedStart = try #require(firstSound(played), "\(speaker.outputPath): nothing played")
        let offset = playedStart - sourceStart
        try #require(offset >= 0 && offset + expected.count <= played.count, "\(speaker.outputPath): \(played.count / 2) frames, the source's \(expected.count / 2) from frame \(offset / 2)")
        #expect(played[..<offset].allSatisfy { $0 == 0 }, "silence before the source")
        let difference = mismatch(played[offset..<(offset + expected.count)], expected)
        #expect(difference == nil, "the source, sample for sample: \(difference ?? "")")
        #expect(played[(offset + expected.count)...].allSatisfy { $0 == 0 }, "silence after the source")
    }

    @Test func aSpeakerIsKeptFilledAheadAndPlaysOnWithoutAGapPastEachLookAhead() throws {
        // A 2 s look-ahead and 10 s of audio: once filled, the sender was asked for more only when
        // the speaker had run down to 0.2 s, and sent 4,096 frames of silence each time (gaps of
        // 93 to 388 frames every look-ahead; a 180 s one left a speaker 0.2 s from a gap every 3
        // minutes, and a cut then was heard at once).
        let ramp = try RampAudio.file(named: "route-ramp-10s", seconds: 10)
        let speaker = try SpeakerProcess(name: "porch")
        defer { speaker.stop() }
        let play = try SpeakerProcess.play(ramp, to: [speaker], arguments: ["--lookahead", "2", "--verbose"])
        #expect(play.status == 0, "\(play.output)\(play.errorOutput)")
        #expect(!play.errorOutput.contains("nothing to send"), "the sender ran dry: \(play.errorOutput.split(separator: "\n").filter { $0.contains("nothing to send") })")
        Thread.sleep(forTimeInterval: 0.5)
        speaker.stop()
        let played = try RampAudio.played(wav: speaker.outputPath)
        let piece = try #require(played.pieces.first, "\(speaker.outputPath): nothing played")
        #expect(played.pieces.count == 1 && piece.isContinuous(tolerance: 2), "a gap, a jump or a repeat: \(played)")
        #expect(abs(piece.count - (10 * 44_100 - 1)) <= 45 + RampAudio.resamplingAllowance(piece.count), "\(played)")
    }

    @Test func theArtworkOfWhatPlaysReachesTheSpeakerByteForByte() throws {
        // A FLAC whose cover is a PNG made here, then a WAV without one.
        let ramp = try RampAudio.file(named: "route-ramp-2s", seconds: 2)
        let cover = TestAudio.path("route-cover-\(UUID().uuidString.prefix(8)).png")
        let covered = TestAudio.path("route-covered-\(UUID().uuidString.prefix(8)).flac")
        let made = try ExternalTool.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48", "-frames:v", "1", cover])
        try #require(made.status == 0, "\(made.errorOutput)")
        let muxed = try ExternalTool.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", ramp, "-i", cover, "-map", "0:a", "-map", "1:v", "-c:a", "flac",
                                                              "-c:v", "copy", "-disposition:v", "attached_pic", covered])
        try #require(muxed.status == 0, "\(muxed.errorOutput)")
        let digest = try ExternalTool.run("/usr/bin/sha256sum", [cover]).output.prefix(16)
        let size = try #require(FileManager.default.attributesOfItem(atPath: cover)[.size] as? Int)

        let speaker = try SpeakerProcess(name: "study")
        defer { speaker.stop() }
        let play = try ExternalTool.run(ExternalTool.longformExecutable, ["play", "--route", "speaker:" + speaker.endpoint(),
                                                                          "--state", TestAudio.path("route-state-\(UUID().uuidString.prefix(8))"), covered, ramp])
        #expect(play.status == 0, "\(play.output)\(play.errorOutput)")
        Thread.sleep(forTimeInterval: 0.5)
        speaker.stop()
        // The picture's own bytes (its size and digest), shown while the FLAC plays, then none for the WAV.
        let log = speaker.output
        let shown = try #require(log.range(of: "artwork image/png, \(size) bytes, SHA-256 \(digest)…"), "\(log)")
        let none = try #require(log.range(of: "no artwork"), "\(log)")
        #expect(shown.upperBound < none.lowerBound && log[shown.upperBound...].contains("now playing route-ramp-2s.wav"), "\(log)")
    }

    @Test(arguments: [nil, "float"])
    func pauseResumeAndSeekReachTheSpeakerWithNothingLostOrRepeated(codec: String?) throws {
        let music = TestAudio.path("route-music-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try RampAudio.file(named: "route-ramp-8s", seconds: 8), toPath: music + "/ramp.wav")
        let speaker = try SpeakerProcess(name: "den")
        defer { speaker.stop() }
        let server = try ServeProcess(state: TestAudio.path("route-serve-\(UUID().uuidString.prefix(8))"), music: music,
                                      route: "speaker:" + speaker.endpoint() + (codec.map { "?codec=" + $0 } ?? ""))
        defer { server.kill() }
        let client = HTTPTestClient(port: server.port, token: server.token)
        func state() throws -> [String: Any] { try client.get("/api/state").json }
        func waitFor(_ condition: ([String: Any]) -> Bool) throws {
            let deadline = Date().addingTimeInterval(10)
            while try !condition(state()) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        }
        func offset(_ state: [String: Any]) -> Double { (state["offset"] as? NSNumber)?.doubleValue ?? -1 }

        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "ramp.wav"}]}"#).status == 201)
        #expect(try client.post("/api/transport/play").status == 204)
        try waitFor { offset($0) > 1.5 }
        #expect(try client.post("/api/transport/pause").status == 204)
        Thread.sleep(forTimeInterval: 1)
        let pausedAt = offset(try state())
        #expect(try client.post("/api/transport/play").status == 204)
        try waitFor { offset($0) > pausedAt + 1.5 }
        // A seek back to where the ramp was at 0.5 s: the speaker plays from there, at once.
        #expect(try client.post("/api/transport/seek", json: #"{"offset": 0.5}"#).status == 204)
        try waitFor { $0["playbackState"] as? String == "stopped" }
        Thread.sleep(forTimeInterval: 0.5)
        speaker.stop()

        let played = try RampAudio.played(wav: speaker.outputPath).splitAtJumps()
        // Three pieces: to the pause, from the pause to the seek, from the seek (a jump back to
        // frame 22,050) to the end. The pause is a silence of a second, the seek one of a few
        // milliseconds (the player pauses while it decodes the new place) or none.
        #expect(played.pieces.count == 3 && played.pieces.allSatisfy { $0.isContinuous(tolerance: 2) }, "\(played)")
        guard played.pieces.count == 3 else { return }
        #expect((40_000...60_000).contains(played.silenceLengths[0]) && played.silenceLengths[1] < 4_410, "\(played)")
        let (beforePause, afterPause, afterSeek) = (played.pieces[0], played.pieces[1], played.pieces[2])
        #expect(RampAudio.distance(from: beforePause.last, to: afterPause.first, frames: 2 * RampAudio.ringingFrames + 1) <= 2,
                "the pause lost or repeated audio: \(played)")
        #expect(RampAudio.distance(from: Int32(RampAudio.value(ofFrame: 22_050)), to: afterSeek.first, frames: RampAudio.ringingFrames) <= 2, "\(played)")
        #expect(abs(afterSeek.count - (8 * 44_100 - 22_050)) <= 45 + RampAudio.resamplingAllowance(afterSeek.count), "after the seek, the ramp plays to its end: \(played)")
    }

    /// A sine of amplitude 0.5 (16,384 in 16 bits) at 441 Hz: its peak over any 100 frames is its level.
    static func sine(named name: String, seconds: Int) throws -> String {
        let path = TestAudio.path(name + ".wav")
        if !FileManager.default.fileExists(atPath: path) {
            let sox = try ExternalTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", path, "synth", "\(seconds)", "sine", "441", "vol", "0.5"])
            try #require(sox.status == 0, "sox: \(sox.errorOutput)")
        }
        return path
    }

    /// The peak level, left channel, of each tenth of a second a speaker played, from the first sound on.
    static func levels(ofSpeakerOutput path: String) throws -> [Int32] {
        let samples = try WAVFileReader(path: path).integerSamples
        let left = stride(from: 0, to: samples.count, by: 2).map { abs(samples[$0]) }
        guard let first = left.firstIndex(where: { $0 > 100 }) else { return [] }
        return stride(from: first, to: left.count - 4_410, by: 4_410).map { left[$0..<($0 + 4_410)].max() ?? 0 }
    }

    @Test func eachSpeakersOwnVolumeFromPlayIsHeardOnThatSpeaker() throws {
        let sine = try Self.sine(named: "route-sine-2s", seconds: 2)
        let speakers = try ["study", "porch"].map { try SpeakerProcess(name: $0) }
        defer { speakers.forEach { $0.stop() } }
        let route = "speaker:" + speakers.map { $0.endpoint() }.joined(separator: ",")
        let state = TestAudio.path("route-state-\(UUID().uuidString.prefix(8))")
        // The group at half, the porch at half of that.
        let play = try ExternalTool.run(ExternalTool.longformExecutable, ["play", "--route", route, "--state", state, "--volume", "0.5",
                                                                         "--speaker-volume", speakers[1].endpoint() + "=0.5", sine])
        #expect(play.status == 0, "\(play.output)\(play.errorOutput)")
        Thread.sleep(forTimeInterval: 0.5)
        speakers.forEach { $0.stop() }
        let study = try Self.levels(ofSpeakerOutput: speakers[0].outputPath), porch = try Self.levels(ofSpeakerOutput: speakers[1].outputPath)
        // 2 s of sound: the tenths that hold only the sine (not its end) are at its level.
        #expect(study.count >= 19 && study.prefix(19).allSatisfy { abs($0 - 8_192) <= 82 }, "the study played at \(study), not 8192")
        #expect(porch.count >= 19 && porch.prefix(19).allSatisfy { abs($0 - 4_096) <= 41 }, "the porch played at \(porch), not 4096")

        // A speaker the route does not have, and a volume out of range, are refused before anything plays.
        let stranger = try ExternalTool.run(ExternalTool.longformExecutable, ["play", "--route", route, "--state", state,
                                                                             "--speaker-volume", "127.0.0.1:9=0.5", sine])
        #expect(stranger.status != 0 && stranger.errorOutput.contains("127.0.0.1:9 is not one of the route's speakers"), "\(stranger.errorOutput)")
        let loud = try ExternalTool.run(ExternalTool.longformExecutable, ["play", "--route", route, "--state", state,
                                                                         "--speaker-volume", speakers[0].endpoint() + "=1.5", sine])
        #expect(loud.status != 0 && loud.errorOutput.contains("the volume from 0 to 1"), "\(loud.errorOutput)")
    }

    @Test func volumesFromTheAPIAreHeardAtOnceOnTheSpeakersTheyAreForAndAreKept() throws {
        let music = TestAudio.path("route-music-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try Self.sine(named: "route-sine-8s", seconds: 8), toPath: music + "/sine.wav")
        let speakers = try ["attic", "cellar"].map { try SpeakerProcess(name: $0) }
        defer { speakers.forEach { $0.stop() } }
        let state = TestAudio.path("route-serve-\(UUID().uuidString.prefix(8))")
        let route = "speaker:" + speakers.map { $0.endpoint() }.joined(separator: ",")
        var server = try ServeProcess(state: state, music: music, route: route)
        defer { server.kill() }
        var client = HTTPTestClient(port: server.port, token: server.token)
        func offset() throws -> Double { (try client.get("/api/state").json["offset"] as? NSNumber)?.doubleValue ?? 0 }
        func wait(untilOffset seconds: Double) throws {
            let deadline = Date().addingTimeInterval(10)
            while try offset() < seconds && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            try #require(try offset() >= seconds, "playback did not reach \(seconds) s")
        }
        let listed = try client.get("/api/speakers")
        #expect(listed.status == 200 && listed.text.contains(#""address":"\#(speakers[1].endpoint())""#), "\(listed)")
        #expect((listed.json["speakers"] as? [[String: Any]])?.map { ($0["volume"] as? NSNumber)?.floatValue } == [1, 1], "\(listed)")

        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "sine.wav"}]}"#).status == 201)
        #expect(try client.post("/api/transport/play").status == 204)
        // At 2 s the cellar's own volume goes to a quarter; 1.2 s after that is done the player's
        // (both) to a half; 1.2 s after that the end. (Each span starts when its change is done:
        // on a loaded machine a call has taken half a second.)
        try wait(untilOffset: 2)
        let speakerChange = (from: try offset(), set: try client.put("/api/speakers/1/volume", json: #"{"volume": 0.25}"#), to: try offset())
        #expect(speakerChange.set.status == 200 && (speakerChange.set.json["volume"] as? NSNumber)?.floatValue == 0.25
                && speakerChange.set.json["index"] as? Int == 1, "\(speakerChange.set)")
        // Refused, naming what is wrong; nothing changes.
        let missing = try client.put("/api/speakers/2/volume", json: #"{"volume": 0.5}"#)
        #expect(missing.status == 404 && missing.text.contains("no speaker has index 2"), "\(missing)")
        let loud = try client.put("/api/speakers/0/volume", json: #"{"volume": 2}"#)
        #expect(loud.status == 400 && loud.text.contains("volume 2.0 is outside 0...1"), "\(loud)")
        try wait(untilOffset: speakerChange.to + 1.2)
        let groupChange = (from: try offset(), status: try client.put("/api/volume", json: #"{"volume": 0.5}"#).status, to: try offset())
        #expect(groupChange.status == 200)
        let end = groupChange.to + 1.2
        try wait(untilOffset: end)
        server.kill()
        Thread.sleep(forTimeInterval: 0.5)
        speakers.forEach { $0.stop() }

        // Each tenth of a second a speaker played is at one level: before a change, or from a few
        // tenths after it (the speakers apply volumes as they play, not to the minutes they hold).
        let attic = try Self.levels(ofSpeakerOutput: speakers[0].outputPath), cellar = try Self.levels(ofSpeakerOutput: speakers[1].outputPath)
        func tenths(_ levels: [Int32], before change: (from: Double, to: Double)) -> ArraySlice<Int32> { levels.prefix(max(Int(change.from * 10) - 1, 0)) }
        func tenths(_ levels: [Int32], after change: (from: Double, to: Double), until next: Double) -> ArraySlice<Int32> {
            let first = Int(change.to * 10) + 3, end = min(Int(next * 10) - 1, levels.count)
            return first < end ? levels[first..<end] : []
        }
        func at(_ level: Int32, _ tenths: ArraySlice<Int32>) -> Bool { tenths.count >= 4 && tenths.allSatisfy { abs($0 - level) <= level / 100 } }
        let speakerSpan = (speakerChange.from, speakerChange.to), groupSpan = (groupChange.from, groupChange.to)
        #expect(at(16_384, tenths(attic, before: groupSpan)) && at(8_192, tenths(attic, after: groupSpan, until: end)),
                "the attic played at \(attic); the player's volume changed at \(groupSpan) s")
        #expect(at(16_384, tenths(cellar, before: speakerSpan)) && at(4_096, tenths(cellar, after: speakerSpan, until: groupSpan.0))
                && at(2_048, tenths(cellar, after: groupSpan, until: end)),
                "the cellar played at \(cellar); its own volume changed at \(speakerSpan) s, the player's at \(groupSpan) s")

        // Kept by address: the server started again on the same speakers gives the cellar its volume back.
        server = try ServeProcess(state: state, music: music, route: route)
        client = HTTPTestClient(port: server.port, token: server.token)
        let kept = try client.get("/api/speakers")
        #expect((kept.json["speakers"] as? [[String: Any]])?.map { ($0["volume"] as? NSNumber)?.floatValue } == [1, 0.25], "\(kept)")
    }
}

/// The network between sender and speaker cut for a minute while playing: a speaker in a network
/// namespace of its own, its link taken down. It plays on from its buffer, and once the link is back
/// the sender reconnects by itself and resumes where the speaker's buffer ends.
@Suite(.serialized, .enabled(if: NetworkNamespace.isAvailable, "needs root for network namespaces"))
struct SpeakerOutageTests {
    @Test func aSixtySecondCutIsPlayedThroughWithoutAGapAndTheSenderResumesWhereTheBufferEnds() throws {
        let seconds = 85.0
        let ramp = try RampAudio.file(named: "route-ramp-85s", seconds: seconds)
        let namespace = try NetworkNamespace()
        let speaker = try SpeakerProcess(name: "garden", host: namespace.address, wrapper: namespace.wrapper)
        defer { speaker.stop() }
        let state = TestAudio.path("route-state-\(UUID().uuidString.prefix(8))")
        let sender = try LongformProcess(["play", "--route", "speaker:" + speaker.endpoint(host: namespace.address), "--state", state, ramp],
                                         readyPattern: "connected to garden")
        Thread.sleep(forTimeInterval: 8)
        try namespace.cut()
        Thread.sleep(forTimeInterval: 60)
        try namespace.restore()
        sender.waitForExit()
        #expect(sender.process.terminationStatus == 0, "\(sender.output)")
        Thread.sleep(forTimeInterval: 0.5)
        speaker.stop()

        #expect(sender.output.contains("reconnecting") && sender.output.contains("resuming after frame"), "\(sender.output)")
        let played = try RampAudio.played(wav: speaker.outputPath)
        let piece = try #require(played.pieces.first, "nothing played")
        #expect(played.pieces.count == 1 && piece.isContinuous(tolerance: 2), "a gap, a jump or a repeat: \(played)\n\(speaker.output)")
        #expect(abs(piece.count - (Int(seconds * 44_100) - 1)) <= 45 + RampAudio.resamplingAllowance(piece.count), "\(played)\n\(speaker.output)")
    }
}

/// Plays `ramp` with `longform play` to `speakers` in `namespace` through `scripts/impair` (`delay`
/// ± `jitter` ms, at most `rate` Mbit/s toward each host), the route given `routeQuery`; returns
/// the sender once it has ended (checked) and a second has passed for the speakers to play out.
/// The speakers see the proxy as their sender (it connects from 127.0.0.1 inside), so they ask
/// its UDP port for the clock, which relays to the sender's fixed timing port on this side.
private func playThroughImpairment(_ ramp: String, to speakers: [SpeakerProcess], in namespace: NetworkNamespace,
                                   delay: Double, jitter: Double, rate: Double? = nil, routeQuery: String = "") throws -> LongformProcess {
    // A port free on this side (the sender binds it on every address; the proxy binds it inside).
    let probe = try LoopbackSocket.bound(type: Int32(SOCK_DGRAM.rawValue))
    let timingPort = Int(probe.port)
    close(probe.descriptor)
    let proxy = try ImpairmentProxy(delay: delay, jitter: jitter, rate: rate, tcp: speakers.map { "\(namespace.address):\($0.port)=127.0.0.1:\($0.port)" },
                                    udp: ["127.0.0.1:\(timingPort)=\(namespace.hostAddress):\(timingPort)"], wrapper: namespace.wrapper)
    let state = TestAudio.path("route-state-\(UUID().uuidString.prefix(8))")
    let sender = try LongformProcess(["play", "--route", "speaker:" + speakers.map { $0.endpoint(host: namespace.address) }.joined(separator: ",") + routeQuery,
                                      "--state", state, ramp],
                                     readyPattern: "connected to", environment: ["LONGFORM_SPEAKER_TIMING_PORT": "\(timingPort)"])
    sender.waitForExit()
    #expect(sender.process.terminationStatus == 0, "\(sender.output)")
    Thread.sleep(forTimeInterval: 1)
    withExtendedLifetime(proxy) {}
    return sender
}

/// Speakers across a jittery network: in a namespace of their own, behind `scripts/impair`, which
/// holds every chunk of audio and every clock datagram 5 ± 5 ms at random. The sender answers the
/// clock on the port fixed by `LONGFORM_SPEAKER_TIMING_PORT`, which the proxy relays.
@Suite(.serialized, .enabled(if: NetworkNamespace.isAvailable, "needs root for network namespaces"))
struct SpeakerJitterTests {
    @Test func twoSpeakersBehindFiveMillisecondsOfJitterPlayEveryFrameOnceWithoutAJump() throws {
        let seconds = 8.0
        let ramp = try RampAudio.file(named: "route-ramp-8s", seconds: seconds)
        let namespace = try NetworkNamespace()
        let speakers = try ["attic", "porch"].map { try SpeakerProcess(name: $0, wrapper: namespace.wrapper) }
        defer { speakers.forEach { $0.stop() } }
        let sender = try playThroughImpairment(ramp, to: speakers, in: namespace, delay: 5, jitter: 5)
        for speaker in speakers {
            speaker.stop()
            // Both synchronised their clocks through the proxy (else nothing would play) and
            // played the whole ramp once: no gap, jump or repeat from a clock that moved.
            let played = try RampAudio.played(wav: speaker.outputPath)
            let piece = try #require(played.pieces.first, "\(speaker.outputPath): nothing played; \(sender.output)")
            #expect(played.pieces.count == 1 && piece.isContinuous(tolerance: 2), "\(speaker.outputPath): \(played)")
            #expect(abs(piece.count - (Int(seconds * 44_100) - 1)) <= 45 + RampAudio.resamplingAllowance(piece.count), "\(speaker.outputPath): \(played)")
        }
    }
}

/// A speaker behind a link of limited rate (`scripts/impair --rate`), as on Wi-Fi: the fill comes
/// slower than the speaker reads, so once it holds ten seconds it reads every 10 ms rather than at
/// each segment; nothing is lost or repeated by it.
@Suite(.serialized, .enabled(if: NetworkNamespace.isAvailable, "needs root for network namespaces"))
struct SpeakerSlowLinkTests {
    @Test(arguments: ["float", "flac"])
    func aFillOverATwentyMegabitLinkIsReadPacedAndPlaysEveryFrameOnce(codec: String) throws {
        let seconds = 16.0
        let ramp = try RampAudio.file(named: "route-ramp-16s", seconds: seconds)
        let namespace = try NetworkNamespace()
        let speaker = try SpeakerProcess(name: "loft", extraArguments: ["--verbose"], wrapper: namespace.wrapper)
        defer { speaker.stop() }
        let sender = try playThroughImpairment(ramp, to: [speaker], in: namespace, delay: 0, jitter: 0, rate: 20, routeQuery: "?codec=\(codec)")
        speaker.stop()
        // The fill (16 s of float is 5.6 MB, 2.3 s at 20 Mbit/s) streamed in far ahead: read paced.
        #expect(speaker.output.contains("reading it every 10 ms"), "\(speaker.output)")
        let played = try RampAudio.played(wav: speaker.outputPath)
        let piece = try #require(played.pieces.first, "nothing played; \(sender.output)")
        #expect(played.pieces.count == 1 && piece.isContinuous(tolerance: 2), "a gap, a jump or a repeat: \(played)")
        #expect(abs(piece.count - (Int(seconds * 44_100) - 1)) <= 45 + RampAudio.resamplingAllowance(piece.count), "\(played)")
    }
}

/// Restarts on either side: a speaker that comes back is fed again in step, and a speaker whose
/// sender died plays on from its buffer and takes the next sender.
@Suite(.serialized) struct SpeakerRestartTests {
    @Test func aRestartedSpeakerIsFedAgainAndPlaysInStepFromWhereTheTimelineIs() throws {
        let ramp = try RampAudio.file(named: "route-ramp-12s", seconds: 12)
        let first = try SpeakerProcess(name: "study")
        let state = TestAudio.path("route-state-\(UUID().uuidString.prefix(8))")
        let sender = try LongformProcess(["play", "--route", "speaker:" + first.endpoint(), "--state", state, ramp], readyPattern: "connected to study")
        Thread.sleep(forTimeInterval: 4)
        first.running.kill(SIGKILL)
        let second = try SpeakerProcess(name: "study", extraArguments: [], listenPort: first.port)
        defer { second.stop() }
        sender.waitForExit()
        // Time for the speaker to play out what it holds, on a host the other suites keep busy.
        Thread.sleep(forTimeInterval: 1.5)
        second.stop()

        #expect(sender.output.contains("; reconnecting"), "\(sender.output)")
        let played = try RampAudio.played(wav: second.outputPath)
        let piece = try #require(played.pieces.first, "the restarted speaker played nothing: \(sender.output)")
        #expect(played.pieces.count == 1 && piece.isContinuous(tolerance: 2), "\(played)")
        // It joined where the timeline was, not at the start (the first speaker played about four
        // seconds), within a few seconds of its restart (the sender tries again at least every
        // second), and played to the end.
        #expect(piece.count < 10 * 44_100 && piece.count > Int(4.5 * 44_100), "\(played)")
        #expect(RampAudio.distance(from: piece.last, to: Int32(RampAudio.value(ofFrame: 12 * 44_100 - 1)), frames: RampAudio.ringingFrames) <= 2, "\(played)")
    }

    @Test func aSpeakerWhoseSenderDiedPlaysOnFromItsBufferAndTakesTheNextSender() throws {
        let ramp = try RampAudio.file(named: "route-ramp-6s", seconds: 6)
        let speaker = try SpeakerProcess(name: "porch")
        defer { speaker.stop() }
        let state = TestAudio.path("route-state-\(UUID().uuidString.prefix(8))")
        let arguments = ["play", "--route", "speaker:" + speaker.endpoint(), "--state", state, ramp]
        let first = try LongformProcess(arguments, readyPattern: "connected to porch")
        Thread.sleep(forTimeInterval: 2)
        first.kill(SIGKILL)
        Thread.sleep(forTimeInterval: 6)
        let second = try ExternalTool.run(ExternalTool.longformExecutable, arguments)
        #expect(second.status == 0, "\(second.output)\(second.errorOutput)")
        Thread.sleep(forTimeInterval: 0.5)
        speaker.stop()

        // The first sender's ramp whole (from the buffer after its sender died), then the second's.
        let played = try RampAudio.played(wav: speaker.outputPath)
        #expect(played.pieces.count == 2 && played.pieces.allSatisfy { $0.isContinuous(tolerance: 2) }, "\(played)")
        for piece in played.pieces {
            #expect(abs(piece.count - (6 * 44_100 - 1)) <= 45 + RampAudio.resamplingAllowance(piece.count), "\(played)")
        }
        #expect(speaker.output.contains("left; playing on from the buffer"), "\(speaker.output)")
    }
}
