import Foundation
import LongformTestSupport
import Testing

/// The `airplay:` route against a real AirPlay 1 receiver, Debian's shairport-sync 3.3.8 in a
/// network namespace of its own (`AirPlayReceiver`), checked on the samples it wrote.
@Suite(.serialized, .enabled(if: AirPlayReceiver.isAvailable, "needs root, ip, shairport-sync, avahi-daemon and dbus-daemon"))
struct RAOPReceiverTests {
    /// Not a multiple of the 352 frames a packet holds: each item boundary falls inside a packet.
    static let frames = 132_301

    static func items() throws -> (paths: [String], expected: [[Int16]], isLossless: [Bool]) {
        let reference = try TestAudio.reference("airplay-ref", seconds: Double(frames) / 44_100, startFrequency: 260)
        let encodings = TestAudio.encodings.filter { ["flac", "mp3", "aac-m4a"].contains($0.name) }
        let paths = try encodings.map { try TestAudio.encode(reference, as: $0.fileExtension, arguments: $0.arguments) }
        let exact = try WAVFileReader(path: reference).integerSamples.map { Int16($0) }
        let expected = try zip(encodings, paths).map { encoding, path in
            // ffmpeg's own decode of an .m4a keeps the encoder's padding at the end, which the player trims.
            encoding.isLossless ? exact : Array(try TestAudio.ffmpegDecode(path).prefix(frames * 2).map(sixteenBit))
        }
        return (paths, expected, encodings.map(\.isLossless))
    }

    /// A Float32 sample as the route sends it: ×32768, rounded to nearest, clipped.
    static func sixteenBit(_ sample: Float) -> Int16 { Int16(max(-32768, min(32767, (sample * 32768).rounded(.toNearestOrEven)))) }

    /// Where `expected` (its frames from 1,000 on, past the sweep's quiet start) begins in `output`, in frames.
    static func offset(of expected: [Int16], in output: [Int16]) -> Int? {
        let window = 64, start = 1_000
        let probe = Array(expected[(start * 2)..<((start + window) * 2)])
        var frame = 0
        while (frame + window) * 2 <= output.count {
            if output[frame * 2] == probe[0] && output[frame * 2 + 1] == probe[1] && Array(output[(frame * 2)..<((frame + window) * 2)]) == probe {
                return frame - start
            }
            frame += 1
        }
        return nil
    }

    @Test func aPlaylistOfFLACMP3AndAACComesOutBitExactAndGapless() throws {
        let receiver = try AirPlayReceiver(name: "Kitchen", ignoresVolume: true)
        let (paths, expected, isLossless) = try Self.items()
        let state = TestAudio.path("airplay-state-\(UUID().uuidString.prefix(8))")
        let result = try ExternalTool.run(ExternalTool.longformExecutable,
                                          ["play", "--state", state, "--route", "airplay:\(receiver.address):\(receiver.port)"] + paths, timeLimit: 120)
        #expect(result.status == 0, "\(result.errorOutput)")
        // The receiver writes what it plays up to 0.15 s before it is due: all of it is there once the player ends.
        Thread.sleep(forTimeInterval: 0.5)
        let output = receiver.readOutput()
        let all = expected.flatMap { $0 }
        let start = try #require(Self.offset(of: all, in: output), "the first item's audio is not in the receiver's \(output.count / 2) frames; its log: \(receiver.logText.suffix(3000))")
        #expect(output.count >= (start + all.count / 2) * 2, "the receiver played \(output.count / 2 - start) of \(all.count / 2) frames")
        for (index, item) in expected.enumerated() {
            let first = (start + index * Self.frames) * 2
            guard output.count >= first + item.count else { break }
            let heard = output[first..<(first + item.count)]
            if isLossless[index] {
                #expect(mismatch(heard, item) == nil, "item \(index + 1) is not bit-exact at its place: \(mismatch(heard, item) ?? "")")
            } else {
                let differences = zip(heard, item).map { abs(Int($0) - Int($1)) }
                let largest = differences.max() ?? 0
                let firstFrame = (differences.firstIndex { $0 > 1 } ?? 0) / 2, lastFrame = (differences.lastIndex { $0 > 1 } ?? 0) / 2
                #expect(largest <= 1, "item \(index + 1) differs from its decoder's samples by up to \(largest) LSB, from frame \(firstFrame) to \(lastFrame)")
            }
        }
    }
}

extension RAOPReceiverTests {
    @Test func aReceiverNamedAsItAnnouncesItselfIsFoundAndPlays() throws {
        let receiver = try AirPlayReceiver(name: "Kitchen", ignoresVolume: true)
        _ = try receiver.waitUntilAdvertised()
        let (paths, expected, _) = try Self.items()
        let state = TestAudio.path("airplay-state-\(UUID().uuidString.prefix(8))")
        // In the receiver's namespaces, where its Avahi daemon answers (the host's is never asked).
        let command = try receiver.command([ExternalTool.longformExecutable, "play", "--state", state, "--route", "airplay:kitchen", paths[0]])
        let result = try ExternalTool.run(command[0], Array(command.dropFirst()), timeLimit: 60)
        #expect(result.status == 0, "\(result.errorOutput)")
        Thread.sleep(forTimeInterval: 0.5)
        let output = receiver.readOutput()
        let start = try #require(Self.offset(of: expected[0], in: output), "the item is not in the receiver's output: \(result.errorOutput)")
        #expect(output.count >= (start + Self.frames) * 2 && mismatch(output[(start * 2)..<((start + Self.frames) * 2)], expected[0]) == nil)

        let unknown = try receiver.command([ExternalTool.longformExecutable, "play", "--state", state, "--route", "airplay:Attic", paths[0]])
        let missing = try ExternalTool.run(unknown[0], Array(unknown.dropFirst()), timeLimit: 60)
        #expect(missing.errorOutput.contains("airplay:Attic: no receiver of that name answered over mDNS within 3 s"), "\(missing.errorOutput)")
    }
}

/// `serve` with a music directory holding one ramp (`ramp.wav`), playing to `receiver`.
final class RampServer {
    let server: ServeProcess
    let client: HTTPTestClient

    init(rampSeconds seconds: Int, to receiver: AirPlayReceiver) throws {
        let music = TestAudio.path("airplay-music-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try RampAudio.file(named: "airplay-ramp-\(seconds)s", seconds: Double(seconds)), toPath: music + "/ramp.wav")
        server = try ServeProcess(state: TestAudio.path("airplay-serve-\(UUID().uuidString.prefix(8))"), music: music,
                                  route: "airplay:\(receiver.address):\(receiver.port)")
        client = HTTPTestClient(port: server.port, token: server.token)
    }

    deinit { server.kill() }

    /// `/api/state`.
    func state() throws -> [String: Any] { try client.get("/api/state").json }

    /// The playhead in the current item (seconds), -1 when the state has none.
    static func offset(_ state: [String: Any]) -> Double { (state["offset"] as? NSNumber)?.doubleValue ?? -1 }

    /// Waits up to 20 s for `condition` on the state.
    func waitFor(_ condition: ([String: Any]) -> Bool) throws {
        let deadline = Date().addingTimeInterval(20)
        while try !condition(state()) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
    }
}

/// `serve` on the `airplay:` route: what its transport commands do to what the receiver plays.
@Suite(.serialized, .enabled(if: AirPlayReceiver.isAvailable, "needs root, ip, shairport-sync, avahi-daemon and dbus-daemon"))
struct RAOPCommandTests {
    /// The receiver's left channel, its dither (±1 about silence) read as silence.
    static func left(of output: [Int16]) -> [Int32] {
        stride(from: 0, to: output.count - 1, by: 2).map { abs(Int32(output[$0])) <= 1 ? 0 : Int32(output[$0]) }
    }

    @Test func pauseResumeSeekAndNextAreHeardWithNothingLostOrRepeated() throws {
        let receiver = try AirPlayReceiver(name: "Den", ignoresVolume: true)
        let running = try RampServer(rampSeconds: 8, to: receiver)
        let client = running.client
        func state() throws -> [String: Any] { try running.state() }
        func waitFor(_ condition: ([String: Any]) -> Bool) throws { try running.waitFor(condition) }
        func offset(_ state: [String: Any]) -> Double { RampServer.offset(state) }

        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "ramp.wav"}, {"path": "ramp.wav"}]}"#).status == 201)
        #expect(try client.post("/api/transport/play").status == 204)
        try waitFor { offset($0) > 1.5 }
        #expect(try client.post("/api/transport/pause").status == 204)
        Thread.sleep(forTimeInterval: 1)
        let pausedAt = offset(try state())
        #expect(try client.post("/api/transport/play").status == 204)
        try waitFor { offset($0) > pausedAt + 1.5 }
        // Back to where the ramp was at 0.5 s (frame 22,050), then on to the second item.
        #expect(try client.post("/api/transport/seek", json: #"{"offset": 0.5}"#).status == 204)
        try waitFor { offset($0) > 1.5 && offset($0) < 3 }
        #expect(try client.post("/api/transport/next").status == 204)
        try waitFor { $0["playbackState"] as? String == "stopped" }
        Thread.sleep(forTimeInterval: 1)

        let played = RampAudio.played(left: Self.left(of: receiver.readOutput())).splitAtJumps()
        // Four pieces: to the pause, from the pause to the seek, from the seek to the next item,
        // the next item from its first frame to its end.
        #expect(played.pieces.count == 4 && played.pieces.allSatisfy { $0.isContinuous(tolerance: 0) }, "\(played)")
        guard played.pieces.count == 4 else { return }
        let (beforePause, afterPause, afterSeek, next) = (played.pieces[0], played.pieces[1], played.pieces[2], played.pieces[3])
        #expect(RampAudio.distance(from: beforePause.last, to: afterPause.first, frames: 2 * RampAudio.ringingFrames + 1) == 0,
                "the pause lost or repeated audio: \(played)")
        #expect(RampAudio.distance(from: Int32(RampAudio.value(ofFrame: 22_050)), to: afterSeek.first, frames: RampAudio.ringingFrames) == 0, "\(played)")
        // The ramp's values 0 and 1 read as silence: an item plays from its third frame.
        #expect(next.first == beforePause.first && next.count == 8 * 44_100 - 2, "the next item plays whole: \(played)")
        // The pause is a second of silence; the seek and the skip are none, or what the player
        // took to decode the new place (the speakers' bound, 0.1 s).
        #expect((40_000...60_000).contains(played.silenceLengths[0]) && played.silenceLengths[1] < 4_410 && played.silenceLengths[2] < 4_410, "\(played)")
    }
}

extension RAOPCommandTests {
    /// Removing the item playing (an edit of the current item): the next plays from its first
    /// frame right after the last one heard of the removed item.
    @Test func removingTheItemPlayingIsHeardAsTheNextFromItsStart() throws {
        let receiver = try AirPlayReceiver(name: "Nook", ignoresVolume: true)
        let running = try RampServer(rampSeconds: 6, to: receiver)
        let added = try running.client.post("/api/playlist/items", json: #"{"items": [{"path": "ramp.wav"}, {"path": "ramp.wav"}]}"#)
        #expect(added.status == 201)
        let ids = ((added.json["items"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
        #expect(ids.count == 2, "\(added.text)")
        guard let playing = ids.first else { return }
        #expect(try running.client.post("/api/transport/play").status == 204)
        try running.waitFor { RampServer.offset($0) > 2 }
        #expect(try running.client.delete("/api/playlist/items/\(playing)").status == 204)
        try running.waitFor { $0["playbackState"] as? String == "stopped" }
        Thread.sleep(forTimeInterval: 1)

        let played = RampAudio.played(left: Self.left(of: receiver.readOutput())).splitAtJumps()
        // Two pieces: the removed item up to the edit, then the next one whole, the gap between
        // them what the player took to decode it (under 0.1 s).
        #expect(played.pieces.count == 2 && played.pieces.allSatisfy { $0.isContinuous(tolerance: 0) }, "\(played)")
        guard played.pieces.count == 2 else { return }
        #expect(played.pieces[0].count > 2 * 44_100 && played.pieces[0].count < 4 * 44_100, "the removed item played to the edit: \(played)")
        #expect(played.pieces[1].first == played.pieces[0].first && played.pieces[1].count == 6 * 44_100 - 2, "the next item plays whole: \(played)")
        #expect(played.silenceLengths.allSatisfy { $0 < 4_410 }, "\(played)")
    }

    @Test func aLongPauseStopsTheStreamAndPlayingAgainResumesAtTheNextFrame() throws {
        let receiver = try AirPlayReceiver(name: "Loft", ignoresVolume: true)
        let running = try RampServer(rampSeconds: 6, to: receiver)
        #expect(try running.client.post("/api/playlist/items", json: #"{"items": [{"path": "ramp.wav"}]}"#).status == 201)
        #expect(try running.client.post("/api/transport/play").status == 204)
        try running.waitFor { RampServer.offset($0) > 1.5 }
        #expect(try running.client.post("/api/transport/pause").status == 204)
        // Past the 2 s of silence the stream keeps: it stops, and the play is a FLUSH and a lead-in.
        Thread.sleep(forTimeInterval: 3.5)
        #expect(try running.client.post("/api/transport/play").status == 204)
        try running.waitFor { $0["playbackState"] as? String == "stopped" }
        Thread.sleep(forTimeInterval: 1)

        let played = RampAudio.played(left: Self.left(of: receiver.readOutput())).splitAtJumps()
        #expect(played.pieces.count == 2 && played.pieces.allSatisfy { $0.isContinuous(tolerance: 0) }, "\(played)")
        guard played.pieces.count == 2 else { return }
        #expect(RampAudio.distance(from: played.pieces[0].last, to: played.pieces[1].first, frames: 2 * RampAudio.ringingFrames + 1) == 0,
                "the long pause lost or repeated audio: \(played)")
        #expect(played.pieces[0].count + played.pieces[1].count == 6 * 44_100 - 2, "the ramp plays whole: \(played)")
        #expect(receiver.logText.contains("FLUSH"), "playing again after the long pause was a FLUSH")
    }
}

/// The `airplay:` route's volume, password and faults against shairport-sync.
@Suite(.serialized, .enabled(if: AirPlayReceiver.isAvailable, "needs root, ip, shairport-sync, avahi-daemon and dbus-daemon"))
struct RAOPSessionTests {
    /// A sine of amplitude 0.5 (16,384 in 16 bits) at 441 Hz: its peak over any 100 frames is its level.
    static func sine(seconds: Int) throws -> String {
        let path = TestAudio.path("airplay-sine-\(seconds)s.wav")
        if !FileManager.default.fileExists(atPath: path) {
            try ExternalTool.check("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", path, "synth", "\(seconds)", "sine", "441", "vol", "0.5"])
        }
        return path
    }

    /// The peak of the left channel over each tenth of a second of `samples` that holds sound.
    static func levels(_ samples: ArraySlice<Int16>) -> [Int] {
        let left = stride(from: samples.startIndex, to: samples.endIndex - 1, by: 2).map { abs(Int(samples[$0])) }
        return stride(from: 0, to: left.count - 4_410, by: 4_410).map { left[$0..<($0 + 4_410)].max() ?? 0 }.filter { $0 > 40 }
    }

    static func play(_ arguments: [String], to route: String) throws -> ExternalTool.Result {
        try ExternalTool.run(ExternalTool.longformExecutable, ["play", "--state", TestAudio.path("airplay-state-\(UUID().uuidString.prefix(8))"),
                                                               "--route", route] + arguments, timeLimit: 120)
    }

    @Test func theVolumeIsTheReceiversAndZeroIsSilence() throws {
        let receiver = try AirPlayReceiver(name: "Study")
        let route = "airplay:\(receiver.address):\(receiver.port)"
        let sine = try Self.sine(seconds: 2)
        var levels: [Float: [Int]] = [:]
        for volume: Float in [1, 0.5, 0] {
            let before = receiver.readOutput().count
            let result = try Self.play(["--volume", "\(volume)", sine], to: route)
            #expect(result.status == 0, "\(result.errorOutput)")
            Thread.sleep(forTimeInterval: 0.5)
            levels[volume] = Self.levels(receiver.readOutput()[before...])
        }
        // Full volume: the sine as sent. Half: AirPlay's −6 dB, attenuated by the receiver on its
        // own scale. Zero: AirPlay's mute (−144), nothing but its dither.
        let full = levels[1] ?? [], half = levels[0.5] ?? [], muted = levels[0] ?? []
        #expect(full.count >= 15 && full.allSatisfy { abs($0 - 16_384) <= 2 }, "full volume played at \(full)")
        #expect(half.count >= 15 && half.allSatisfy { $0 > 1_000 && $0 < 12_000 }, "half volume played at \(half)")
        #expect(muted.isEmpty, "a muted receiver played \(muted)")
    }

    @Test func aPasswordIsGivenWhenAskedAndItsLackNamesTheReceiver() throws {
        let receiver = try AirPlayReceiver(name: "Office", password: "s3cret", ignoresVolume: true)
        let route = "airplay:\(receiver.address):\(receiver.port)"
        let sine = try Self.sine(seconds: 2)
        let given = try Self.play([sine], to: route + "?password=s3cret")
        #expect(given.status == 0, "\(given.errorOutput)")
        Thread.sleep(forTimeInterval: 0.5)
        let heard = Self.levels(receiver.readOutput()[...])
        #expect(heard.count >= 15 && heard.allSatisfy { abs($0 - 16_384) <= 2 }, "with the password, it played \(heard)")

        let missing = try Self.play([sine], to: route)
        #expect(missing.errorOutput.contains("airplay:\(receiver.address):\(receiver.port): asks for a password"), "\(missing.errorOutput)")
        let wrong = try Self.play([sine], to: route + "?password=guess")
        #expect(wrong.errorOutput.contains("airplay:\(receiver.address):\(receiver.port): refused the password"), "\(wrong.errorOutput)")
    }

    @Test func aReceiverKilledAndStartedAgainPlaysOnAtTheFrameOfTheTime() throws {
        let receiver = try AirPlayReceiver(name: "Hall", ignoresVolume: true)
        let running = try RampServer(rampSeconds: 12, to: receiver)
        let client = running.client
        func offset() throws -> Double { RampServer.offset(try running.state()) }

        #expect(try client.post("/api/playlist/items", json: #"{"items": [{"path": "ramp.wav"}]}"#).status == 201)
        #expect(try client.post("/api/transport/play").status == 204)
        try running.waitFor { RampServer.offset($0) > 2 }
        receiver.kill()
        Thread.sleep(forTimeInterval: 1)
        try receiver.restart()
        let restartedAt = try offset()
        try running.waitFor { $0["playbackState"] as? String == "stopped" }
        Thread.sleep(forTimeInterval: 0.5)

        let played = RampAudio.played(left: RAOPCommandTests.left(of: receiver.readOutput(sinceLastStart: true))).splitAtJumps()
        // One piece from when it was back to the end: within 3 s of the time it restarted at
        // (connecting again, and 0.4 s ahead), every frame once, to the ramp's last.
        #expect(played.pieces.count == 1 && played.pieces[0].isContinuous(tolerance: 0), "\(played)")
        guard let piece = played.pieces.first else { return }
        let firstFrame = 12 * 44_100 - 1 - piece.count
        #expect(Double(firstFrame) / 44_100 >= restartedAt && Double(firstFrame) / 44_100 <= restartedAt + 3,
                "back from frame \(firstFrame) (\(Double(firstFrame) / 44_100) s), restarted at \(restartedAt) s: \(played)")
        #expect(RampAudio.distance(from: piece.last, to: Int32(RampAudio.value(ofFrame: 12 * 44_100 - 1)), frames: RampAudio.ringingFrames) == 0,
                "it played to the ramp's end: \(played)")
        #expect(running.server.output.contains("airplay:\(receiver.address):\(receiver.port)"), "the log names the receiver it lost: \(running.server.output.suffix(2000))")
    }
}
