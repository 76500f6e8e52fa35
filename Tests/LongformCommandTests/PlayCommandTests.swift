import Foundation
import LongformTestSupport
import Testing

/// `longform play` in real time, to the WAV route, which writes exactly what would be heard.
@Suite struct PlayCommandTests {
    @Test func playingToAWAVRouteWritesTheItemsGaplessInRealTime() throws {
        let reference = try TestAudio.reference("play-ref", seconds: 0.8, startFrequency: 600)
        let flac = try TestAudio.encode(reference, as: "flac", arguments: ["-c:a", "flac"])
        let mp3 = try TestAudio.encode(reference, as: "mp3", arguments: ["-c:a", "libmp3lame", "-b:a", "192k"])
        let output = TestAudio.path("played.wav")
        let started = Date()
        let result = try ExternalTool.run(ExternalTool.longformExecutable, ["play", "--route", "wav:" + output, "--state", TestAudio.path("play-state-\(UUID().uuidString)"), flac, flac, mp3])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output.contains("▶ 1/3") && result.output.contains("▶ 3/3"), "\(result.output)")
        #expect(elapsed > 2.3 && elapsed < 5, "2.4 s of audio played in \(elapsed) s")
        let written = try WAVFileReader(path: output).integerSamples
        let expected = try WAVFileReader(path: reference).integerSamples
        // Silence until the timeline starts, then both FLAC items back to back, exactly.
        let start = try #require(written.firstIndex { $0 != 0 })
        let offset = start - (expected.firstIndex { $0 != 0 } ?? 0)
        let twice = expected + expected
        #expect(offset >= 0 && offset + twice.count <= written.count)
        if offset >= 0 && offset + twice.count <= written.count {
            #expect(mismatch(written[offset..<(offset + twice.count)], twice) == nil)
        }
    }

    @Test func aPlaylistThatListsItselfIsNamedAndSkippedAndTheOthersPlay() throws {
        let reference = try TestAudio.reference("loop-ref", seconds: 0.5, startFrequency: 700)
        let flac = try TestAudio.encode(reference, as: "flac", arguments: ["-c:a", "flac"])
        let folder = TestAudio.path("loop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // One lists itself; two list each other, and the second also lists the FLAC once.
        try "#EXTM3U\nself.m3u\n".write(toFile: folder + "/self.m3u", atomically: true, encoding: .utf8)
        try "a.m3u\n".write(toFile: folder + "/b.m3u", atomically: true, encoding: .utf8)
        try "b.m3u\n\(flac)\n".write(toFile: folder + "/a.m3u", atomically: true, encoding: .utf8)
        let output = TestAudio.path("loop-played.wav")
        let result = try ExternalTool.run(ExternalTool.longformExecutable, ["play", "--route", "wav:" + output, "--state", TestAudio.path("loop-state-\(UUID().uuidString)"),
                                                                            reference, folder + "/self.m3u", folder + "/a.m3u", flac])
        #expect(result.status == 1, "a skipped playlist is a failure")
        #expect(result.errorOutput.contains("self.m3u: the playlist lists itself (self.m3u → self.m3u); skipped"), "\(result.errorOutput)")
        #expect(result.errorOutput.contains("the playlist lists itself (a.m3u → b.m3u → a.m3u)"), "\(result.errorOutput)")
        #expect(result.output.contains("▶ 3/3"), "\(result.output)")
        // The WAV item, the FLAC through a.m3u and the FLAC named last: three times the reference, back to back.
        let written = try WAVFileReader(path: output).integerSamples
        let expected = try WAVFileReader(path: reference).integerSamples
        let start = try #require(written.firstIndex { $0 != 0 })
        let offset = start - (expected.firstIndex { $0 != 0 } ?? 0)
        let thrice = expected + expected + expected
        #expect(offset >= 0 && offset + thrice.count <= written.count)
        if offset >= 0 && offset + thrice.count <= written.count {
            #expect(mismatch(written[offset..<(offset + thrice.count)], thrice) == nil)
        }
    }

    /// A stream that stops (20 KB, then nothing for 40 s) and one that trickles (20 KB, then a byte
    /// every 2 s: FFmpeg's read timeout never fires).
    @Test(arguments: ["stall/20480/40/", "trickle/20480/2/"])
    func aStallingURLBetweenTwoGoodItemsEndsAndTheGoodItemsAreHeardWhole(stream: String) throws {
        let first = try TestAudio.reference("stall-first", seconds: 1.0, startFrequency: 600)
        let last = try TestAudio.encode(try TestAudio.reference("stall-last", seconds: 1.0, startFrequency: 900), as: "flac", arguments: ["-c:a", "flac"])
        let stalling = try TestAudio.encode(try TestAudio.reference("stall-middle", seconds: 4.0, startFrequency: 300), as: "mp3", arguments: ["-c:a", "libmp3lame", "-b:a", "128k"])
        // 20 KB (about a second of it), then nothing or a trickle, on every connection.
        let url = try HTTPFileServer.start() + stream + (stalling as NSString).lastPathComponent
        let output = TestAudio.path("stall-played-\(UUID().uuidString.prefix(8)).wav")
        let started = Date()
        let result = try ExternalTool.run("/usr/bin/timeout", ["60", ExternalTool.longformExecutable, "play", "--route", "wav:" + output,
                                                               "--state", TestAudio.path("stall-state-\(UUID().uuidString)"), first, url, last])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 1, "the stalled item is a failed item; status \(result.status): \(result.errorOutput)")
        #expect(elapsed < 30, "play ended after \(elapsed) s")
        #expect(result.errorOutput.contains(url) && result.errorOutput.contains("stalled"), "\(result.errorOutput)")
        #expect(result.output.contains("▶ 3/3"), "\(result.output)")

        // The first item from the start of the sound, and the last, each whole and exact.
        let written = try WAVFileReader(path: output).integerSamples
        let firstSamples = try WAVFileReader(path: first).integerSamples
        let lastSamples = try WAVFileReader(path: TestAudio.reference("stall-last", seconds: 1.0, startFrequency: 900)).integerSamples
        let start = try #require(written.firstIndex { $0 != 0 })
        let offset = start - (firstSamples.firstIndex { $0 != 0 } ?? 0)
        #expect(offset >= 0 && offset + firstSamples.count <= written.count)
        if offset >= 0 && offset + firstSamples.count <= written.count {
            #expect(mismatch(written[offset..<(offset + firstSamples.count)], firstSamples) == nil)
        }
        let lastAt = Self.firstIndex(of: lastSamples, in: written, from: offset + firstSamples.count)
        #expect(lastAt != nil, "the last item is not heard whole anywhere after the first")
    }

    /// Where `pattern` occurs in `samples` at or after `start` (stereo frames: even indices), or nil.
    static func firstIndex(of pattern: [Int32], in samples: [Int32], from start: Int) -> Int? {
        guard let anchor = pattern.firstIndex(where: { $0 != 0 }), start >= 0 else { return nil }
        var index = start
        while index + pattern.count <= samples.count {
            if samples[index + anchor] == pattern[anchor], samples[index..<(index + pattern.count)].elementsEqual(pattern) { return index }
            index += 2
        }
        return nil
    }

    @Test func theEnqueuerLogIsOffUnlessAskedFor() throws {
        let flac = try TestAudio.encode(try TestAudio.reference("log-ref", seconds: 1.2), as: "flac", arguments: ["-c:a", "flac"])
        let quiet = try ExternalTool.run(ExternalTool.longformExecutable, ["render", "-o", TestAudio.path("log-quiet.wav"), flac])
        #expect(!quiet.errorOutput.contains("enqueued"))
        let chatty = try ExternalTool.run(ExternalTool.longformExecutable, ["render", "--log-enqueuer", "-o", TestAudio.path("log-chatty.wav"), flac])
        #expect(chatty.errorOutput.components(separatedBy: "longform.renderer.enqueue").count - 1 == 2, "\(chatty.errorOutput)")
    }

    @Test func helpDescribesEveryCommand() throws {
        let help = try ExternalTool.run(ExternalTool.longformExecutable, ["--help"])
        for command in ["play", "render", "routes"] { #expect(help.output.contains(command)) }
    }
}
