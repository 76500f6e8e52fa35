import Foundation
import LongformSources
import LongformTestSupport
import Testing

/// Bad items get a clear error that names them and the cause, and never crash or stall.
@Suite struct BadInputTests {
    @Test func aMissingFileIsNamed() {
        let path = TestAudio.path("no-such-file.flac")
        #expect { try AudioFileSource(location: path) } throws: { error in
            let error = error as! SourceError
            return error.kind == .notFound && error.description.contains(path)
        }
    }

    @Test func anEmptyFileIsNamed() throws {
        let path = try TestAudio.write([], named: "empty.mp3")
        #expect { try AudioFileSource(location: path) } throws: { ($0 as! SourceError).kind == .empty }
    }

    @Test func garbageIsUnsupported() throws {
        var generator = SystemRandomNumberGenerator()
        let path = try TestAudio.write((0..<50_000).map { _ in UInt8.random(in: 0...255, using: &generator) }, named: "garbage.flac")
        #expect { try AudioFileSource(location: path) } throws: { error in
            let error = error as! SourceError
            return [.unsupported, .corrupt].contains(error.kind) && error.description.contains("garbage.flac")
        }
    }

    @Test func aFileWithoutAudioIsUnsupported() throws {
        let path = TestAudio.path("picture.png")
        try ExternalTool.check("ffmpeg", ["-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "color=blue:s=8x8", "-frames:v", "1", path])
        #expect { try AudioFileSource(location: path) } throws: { error in
            let error = error as! SourceError
            return error.kind == .unsupported && error.description.contains("no audio stream")
        }
    }

    @Test func aTruncatedFileYieldsWhatCanBeDecoded() throws {
        let reference = try DecodingTests.reference()
        for fileExtension in ["flac", "mp3"] {
            let encoding = TestAudio.encodings.first { $0.fileExtension == fileExtension }!
            let path = try TestAudio.encode(reference, as: fileExtension, arguments: encoding.arguments)
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let truncated = try TestAudio.write(Array(bytes[0..<(bytes.count * 6 / 10)]), named: "truncated.\(fileExtension)")
            let decoded = try DecodingTests.decodeAll(truncated)
            let frames = decoded.samples.count / 2
            #expect(frames > DecodingTests.referenceFrames / 2 && frames < DecodingTests.referenceFrames * 7 / 10, "\(fileExtension): \(frames) frames")
        }
    }

    @Test func damageInTheMiddleIsSkipped() throws {
        let path = try TestAudio.encode(try DecodingTests.reference(), as: "mp3", arguments: ["-c:a", "libmp3lame", "-b:a", "192k"])
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        for index in stride(from: bytes.count / 2, to: bytes.count / 2 + 3_000, by: 1) { bytes[index] = UInt8(truncatingIfNeeded: index * 7) }
        let damaged = try TestAudio.write(bytes, named: "damaged.mp3")
        let frames = try DecodingTests.decodeAll(damaged).samples.count / 2
        #expect(frames > DecodingTests.referenceFrames * 8 / 10)
    }

    @Test func anUnreachableURLFailsQuicklyAndIsNamed() {
        let url = "http://127.0.0.1:9/nothing.mp3"
        let start = Date()
        #expect { try AudioFileSource(location: url) } throws: { error in
            let error = error as! SourceError
            return error.kind == .unreachable && error.description.contains(url)
        }
        #expect(Date().timeIntervalSince(start) < Double(AudioFileSource.networkTimeoutSeconds) + 2)
    }

    @Test func otherSchemesAreRefused() {
        #expect { try AudioFileSource(location: "ftp://example.invalid/a.mp3") } throws: { ($0 as! SourceError).kind == .unsupportedScheme }
    }

    @Test func aDirectoryIsNotAnItem() {
        #expect { try AudioFileSource(location: TestAudio.directory.path) } throws: { ($0 as! SourceError).kind == .unreadable }
    }
}
