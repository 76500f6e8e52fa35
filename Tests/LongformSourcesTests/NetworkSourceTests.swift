import Foundation
import LongformCore
import LongformSources
import LongformTestSupport
import Testing

/// Items given as http URLs, from a real HTTP server on loopback.
@Suite struct NetworkSourceTests {
    @Test func anHTTPItemDecodesLikeTheFile() throws {
        let base = try HTTPFileServer.start()
        let reference = try DecodingTests.reference()
        try TestAudio.encode(reference, as: "flac", arguments: ["-c:a", "flac"])
        try TestAudio.encode(reference, as: "mp3", arguments: ["-c:a", "libmp3lame", "-b:a", "192k"])
        let flac = try DecodingTests.decodeAll(base + "decode-ref.flac")
        let difference = mismatch(flac.samples, try WAVFileReader(path: reference).samples)
        #expect(difference == nil, "FLAC over HTTP is not bit-exact: \(difference ?? "")")
        let local = try DecodingTests.decodeAll(TestAudio.path("decode-ref.mp3")).samples
        let remote = try DecodingTests.decodeAll(base + "decode-ref.mp3").samples
        let mp3Difference = mismatch(remote, local)
        #expect(mp3Difference == nil, "MP3 over HTTP differs from the file: \(mp3Difference ?? "")")
    }

    @Test func aMissingURLIsNamedAndUnreachable() throws {
        let url = try HTTPFileServer.start() + "no-such-item.mp3"
        #expect { try AudioFileSource(location: url) } throws: { error in
            let error = error as! SourceError
            return error.kind == .unreachable && error.description.contains(url) && error.description.contains("404")
        }
    }
}
