import Foundation
import LongformTestSupport
import Testing

/// `longform render`, checked on the samples it wrote.
@Suite struct RenderCommandTests {
    static let frames = 145_531

    static func reference() throws -> String { try TestAudio.reference("render-ref", seconds: Double(frames) / 44_100, startFrequency: 330) }

    static func render(_ items: [String], output name: String, options: [String] = []) throws -> (result: ExternalTool.Result, wav: WAVFileReader?) {
        let output = TestAudio.path(name)
        try? FileManager.default.removeItem(atPath: output)
        let result = try ExternalTool.run(ExternalTool.longformExecutable, ["render", "-o", output] + options + items)
        return (result, try? WAVFileReader(path: output))
    }

    @Test func everyFormatBackToBackIsGaplessAndSampleExact() throws {
        let reference = try Self.reference()
        let encodings = TestAudio.encodings.filter { $0.name != "opus" && $0.name != "aac-adts" }
        let items = try encodings.map { try TestAudio.encode(reference, as: $0.fileExtension, arguments: $0.arguments) }
        let (result, wav) = try Self.render(items, output: "all-formats.wav", options: ["--sample-format", "f32"])
        #expect(result.status == 0, "\(result.errorOutput)")
        let output = try #require(wav)
        #expect(output.formatTag == 3 && output.bitsPerSample == 32 && output.sampleRate == 44_100)
        #expect(output.frameCount == Self.frames * items.count, "\(output.frameCount) frames, expected \(Self.frames * items.count)")
        let expected = try WAVFileReader(path: reference).samples
        for (index, encoding) in encodings.enumerated() {
            let segment = Array(output.samples[(index * Self.frames * 2)..<((index + 1) * Self.frames * 2)])
            if encoding.isLossless {
                let difference = mismatch(segment, expected)
                #expect(difference == nil, "\(encoding.name) is not bit-exact at its place in the render: \(difference ?? "")")
            } else {
                let decoded = try TestAudio.ffmpegDecode(items[index])
                let difference = zip(segment, decoded).map { abs($0 - $1) }.max() ?? 1
                #expect(difference < 1e-6, "\(encoding.name) differs from its decoder's samples by \(difference)")
            }
        }
    }

    @Test func opusAndADTSRenderTheirDecodersSamples() throws {
        let reference48 = try TestAudio.reference("render-ref48", seconds: 96_001.0 / 48_000, sampleRate: 48_000, startFrequency: 330)
        let opus = try TestAudio.encode(reference48, as: "opus", arguments: ["-c:a", "libopus", "-b:a", "160k"])
        let (result, wav) = try Self.render([opus, opus], output: "opus.wav", options: ["--sample-format", "f32", "--sample-rate", "48000"])
        #expect(result.status == 0)
        let output = try #require(wav)
        #expect(output.frameCount == 2 * 96_001)
        let decoded = try TestAudio.ffmpegDecode(opus)
        let matchesDecoder = zip(output.samples[(96_001 * 2)...], decoded).allSatisfy { abs($0 - $1) < 1e-6 }
        #expect(matchesDecoder)

        let adts = try TestAudio.encode(try Self.reference(), as: "aac", arguments: ["-c:a", "aac", "-b:a", "192k", "-f", "adts"])
        let adtsDecoded = try TestAudio.ffmpegDecode(adts)
        let (adtsResult, adtsWAV) = try Self.render([adts], output: "adts.wav", options: ["--sample-format", "f32"])
        #expect(adtsResult.status == 0)
        #expect(adtsWAV?.samples.count == adtsDecoded.count)
    }

    @Test func a48kHzItemInsideA44kHzRenderHasTheRightLength() throws {
        let reference = try Self.reference()
        let flac = try TestAudio.encode(reference, as: "flac", arguments: ["-c:a", "flac"])
        let reference48 = try TestAudio.reference("render-tone48", seconds: 120_001.0 / 48_000, sampleRate: 48_000, startFrequency: 500)
        let (result, wav) = try Self.render([flac, reference48, flac], output: "mixed-rates.wav")
        #expect(result.status == 0, "\(result.errorOutput)")
        let output = try #require(wav)
        // 120 001 frames at 48 kHz are 110 250.92 at 44.1 kHz: the third item starts at the rounded sum.
        let thirdStart = Self.frames + 110_251
        #expect(output.frameCount == thirdStart + Self.frames)
        let expected = try WAVFileReader(path: reference).integerSamples
        #expect(mismatch(output.integerSamples[0..<(Self.frames * 2)], expected) == nil)
        #expect(mismatch(output.integerSamples[(thirdStart * 2)...], expected) == nil, "the item after the resampled one is not frame-exact")
        // The resampled middle is the 48 kHz sweep, resampled: compare with sox's own resampling.
        let soxResampled = TestAudio.path("render-tone48-44.wav")
        try ExternalTool.check("sox", [reference48, "-r", "44100", soxResampled, "rate", "-v"])
        let sox = try WAVFileReader(path: soxResampled).samples
        let middle = Array(output.samples[(Self.frames * 2)..<(thirdStart * 2)])
        let compared = min(sox.count, middle.count) - 400
        var squares: Float = 0
        for index in 200..<compared {
            let difference: Float = middle[index] - sox[index]
            squares += difference * difference
        }
        let rms = (squares / Float(compared - 200)).squareRoot()
        #expect(rms < 1e-3, "the resampled item differs from sox's resampling (RMS \(rms))")
    }

    @Test func sampleFormatsAndChannelsAreHonoured() throws {
        let flac = try TestAudio.encode(try Self.reference(), as: "flac", arguments: ["-c:a", "flac"])
        let (result, wav) = try Self.render([flac], output: "s24-mono.wav", options: ["--sample-format", "s24", "--channels", "1"])
        #expect(result.status == 0)
        let output = try #require(wav)
        #expect(output.bitsPerSample == 24 && output.channelCount == 1 && output.frameCount == Self.frames)
        let stereo = try WAVFileReader(path: try Self.reference()).integerSamples
        // Mono is the mean of left and right; 16-bit samples land exactly on 24-bit values.
        var expectedFirst: [Int32] = []
        for frame in 0..<1000 {
            let sum: Int32 = stereo[frame * 2] + stereo[frame * 2 + 1]
            expectedFirst.append(sum * 128)
        }
        #expect(mismatch(output.integerSamples[0..<1000], expectedFirst) == nil)
    }

    @Test func badItemsAreNamedAndSkippedWhileTheOthersPlayBackToBack() throws {
        let reference = try Self.reference()
        let flac = try TestAudio.encode(reference, as: "flac", arguments: ["-c:a", "flac"])
        let missing = TestAudio.path("render-missing.flac")
        let empty = try TestAudio.write([], named: "render-empty.wav")
        let garbage = try TestAudio.write((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }, named: "render-garbage.mp3")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: flac)))
        let truncated = try TestAudio.write(Array(bytes[0..<(bytes.count / 2)]), named: "render-truncated.flac")
        let unreachable = "http://127.0.0.1:9/stream.mp3"
        let (result, wav) = try Self.render([flac, missing, flac, empty, garbage, unreachable, truncated, flac], output: "bad-items.wav")
        #expect(result.status == 1)
        for culprit in [missing, empty, garbage, unreachable] {
            #expect(result.errorOutput.contains(culprit), "no message names \(culprit): \(result.errorOutput)")
        }
        let output = try #require(wav)
        let expected = try WAVFileReader(path: reference).integerSamples
        let samples = output.integerSamples
        // Three good items and part of the truncated one, back to back.
        #expect(mismatch(samples[0..<(Self.frames * 2)], expected) == nil)
        #expect(mismatch(samples[(Self.frames * 2)..<(Self.frames * 4)], expected) == nil)
        let truncatedFrames = output.frameCount - 3 * Self.frames
        #expect(truncatedFrames > Self.frames / 3 && truncatedFrames < Self.frames * 6 / 10, "truncated item gave \(truncatedFrames) frames")
        let lastStart = (2 * Self.frames + truncatedFrames) * 2
        #expect(mismatch(samples[lastStart...], expected) == nil)
    }

    @Test func aFileThatDecodesToNothingIsAFailedItemNamedWithItsReason() throws {
        let reference = try Self.reference()
        let flac = try TestAudio.encode(reference, as: "flac", arguments: ["-c:a", "flac"])
        // A real FLAC header (its first 8 KB), then zeros to 2 GB: a sparse file, as a damaged disk leaves one.
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: flac)))
        let damaged = try TestAudio.write(Array(bytes[0..<8192]), named: "render-sparse-\(UUID().uuidString.prefix(8)).flac")
        try ExternalTool.check("truncate", ["-s", "2G", damaged])
        defer { try? FileManager.default.removeItem(atPath: damaged) }
        let (result, wav) = try Self.render([flac, damaged, flac], output: "sparse-items.wav")
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("\(damaged): corrupt (no audio could be decoded from it)"), "\(result.errorOutput)")
        let output = try #require(wav)
        let expected = try WAVFileReader(path: reference).integerSamples
        #expect(output.frameCount == 2 * Self.frames, "only the two good items: \(output.frameCount) frames")
        #expect(mismatch(output.integerSamples, expected + expected) == nil)
    }

    @Test func URLAndFileItemsRenderBackToBack() throws {
        let reference = try Self.reference()
        let flac = try TestAudio.encode(reference, as: "flac", arguments: ["-c:a", "flac"])
        let url = try HTTPFileServer.start() + URL(fileURLWithPath: flac).lastPathComponent
        let (result, wav) = try Self.render([url, flac, url], output: "urls.wav")
        #expect(result.status == 0, "\(result.errorOutput)")
        let output = try #require(wav)
        let expected = try WAVFileReader(path: reference).integerSamples
        #expect(output.frameCount == 3 * Self.frames)
        let difference = mismatch(output.integerSamples, expected + expected + expected)
        #expect(difference == nil, "URL items are not gapless and exact: \(difference ?? "")")
    }

    @Test func invalidOptionsAreRefusedWithAMessage() throws {
        let result = try ExternalTool.run(ExternalTool.longformExecutable, ["render", "-o", TestAudio.path("x.wav"), "--sample-format", "s12", "a.flac"])
        #expect(result.status != 0 && result.errorOutput.contains("s12"))
        let route = try ExternalTool.run(ExternalTool.longformExecutable, ["play", "--route", "bluetooth:x", "a.flac"])
        #expect(route.status != 0 && route.errorOutput.contains("bluetooth:x"))
    }
}
