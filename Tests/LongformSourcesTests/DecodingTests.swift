import Foundation
import LongformCore
import LongformSources
import LongformTestSupport
import Testing

/// Every format decoded to exactly the audio that was encoded.
@Suite struct DecodingTests {
    /// 145 531 frames (an odd length) at 44.1 kHz.
    static let referenceFrames = 145_531

    static func reference() throws -> String { try TestAudio.reference("decode-ref", seconds: Double(referenceFrames) / 44_100) }

    /// All delivered frames of `path`, as interleaved Float32, and the buffers' frame counts.
    static func decodeAll(_ path: String) throws -> (samples: [Float], bufferFrames: [Int], source: AudioFileSource) {
        let source = try AudioFileSource(location: path)
        var samples: [Float] = []
        var sizes: [Int] = []
        var expectedPosition: Int64 = 0
        while let buffer = try source.nextSampleBuffer() {
            #expect(buffer.presentationTime == MediaTime(value: expectedPosition, timescale: Int32(buffer.format.sampleRate)))
            expectedPosition += Int64(buffer.frameCount)
            sizes.append(buffer.frameCount)
            samples.append(contentsOf: interleavedFloats(buffer))
        }
        return (samples, sizes, source)
    }

    /// A buffer's samples as interleaved floats, for comparison.
    static func interleavedFloats(_ buffer: SampleBuffer) -> [Float] {
        guard case .pcm(let planes) = buffer.content else { return [] }
        let format = buffer.format
        var out = [Float](repeating: 0, count: buffer.frameCount * format.channelCount)
        for (planeIndex, plane) in planes.enumerated() {
            plane.withUnsafeBytes { raw in
                for frame in 0..<buffer.frameCount {
                    for channel in 0..<(format.isInterleaved ? format.channelCount : 1) {
                        let index = format.isInterleaved ? frame * format.channelCount + channel : frame
                        let value: Float
                        switch format.sampleFormat {
                        case .int16: value = Float(raw.load(fromByteOffset: index * 2, as: Int16.self)) / 32768
                        case .int32: value = Float(Double(raw.load(fromByteOffset: index * 4, as: Int32.self)) / 2_147_483_648)
                        case .float32: value = raw.load(fromByteOffset: index * 4, as: Float.self)
                        case .float64: value = Float(raw.load(fromByteOffset: index * 8, as: Double.self))
                        }
                        out[frame * format.channelCount + (format.isInterleaved ? channel : planeIndex)] = value
                    }
                }
            }
        }
        return out
    }

    @Test(arguments: TestAudio.encodings.filter(\.isLossless))
    func losslessFormatsDecodeBitExact(encoding: (name: String, fileExtension: String, arguments: [String], isLossless: Bool)) throws {
        let reference = try Self.reference()
        let path = try TestAudio.encode(reference, as: encoding.fileExtension, arguments: encoding.arguments)
        let expected = try WAVFileReader(path: reference).samples
        let decoded = try Self.decodeAll(path)
        #expect(decoded.samples.count == expected.count, "\(encoding.name): \(decoded.samples.count / 2) frames, expected \(expected.count / 2)")
        let difference = mismatch(decoded.samples, expected)
        #expect(difference == nil, "\(encoding.name) is not bit-exact: \(difference ?? "")")
        #expect(decoded.source.expectedFrameCount == Int64(Self.referenceFrames))
    }

    @Test(arguments: ["mp3", "aac-m4a", "vorbis"])
    func lossyFormatsWithGaplessInformationYieldTheEncodedLength(name: String) throws {
        let encoding = TestAudio.encodings.first { $0.name == name }!
        let reference = try Self.reference()
        let path = try TestAudio.encode(reference, as: encoding.fileExtension, arguments: encoding.arguments)
        let decoded = try Self.decodeAll(path)
        #expect(decoded.samples.count / 2 == Self.referenceFrames, "\(name): \(decoded.samples.count / 2) frames")
        #expect(decoded.source.expectedFrameCount == Int64(Self.referenceFrames) && decoded.source.isFrameCountExact, "\(name)")
        // The decoder's own samples: ffmpeg's command line, over the length it shares with us
        // (for AAC it keeps the end padding that we cut).
        let ffmpeg = try TestAudio.ffmpegDecode(path)
        let common = min(ffmpeg.count, decoded.samples.count)
        #expect(common >= Self.referenceFrames * 2)
        let difference = zip(decoded.samples[0..<common], ffmpeg[0..<common]).map { abs($0 - $1) }.max() ?? 1
        #expect(difference < 1e-6, "\(name) differs from ffmpeg's decode by \(difference)")
        // And it is the reference signal, within what the codec loses.
        let expected = try WAVFileReader(path: reference).samples
        let error = zip(decoded.samples, expected).map { ($0 - $1) * ($0 - $1) }.reduce(0, +) / Float(expected.count)
        #expect(error.squareRoot() < 0.05, "\(name) does not sound like the reference (RMS error \(error.squareRoot()))")
    }

    @Test func opusYieldsTheEncodedLengthAt48kHz() throws {
        let reference = try TestAudio.reference("decode-ref48", seconds: 120_001.0 / 48_000, sampleRate: 48_000)
        let path = try TestAudio.encode(reference, as: "opus", arguments: ["-c:a", "libopus", "-b:a", "160k"])
        let decoded = try Self.decodeAll(path)
        #expect(decoded.samples.count / 2 == 120_001)
        let ffmpeg = try TestAudio.ffmpegDecode(path)
        #expect(ffmpeg.count == decoded.samples.count)
        let matchesDecoder = zip(decoded.samples, ffmpeg).allSatisfy { abs($0 - $1) < 1e-6 }
        #expect(matchesDecoder)
    }

    @Test func rawADTSYieldsTheDecodersSamples() throws {
        let encoding = TestAudio.encodings.first { $0.name == "aac-adts" }!
        let path = try TestAudio.encode(try Self.reference(), as: encoding.fileExtension, arguments: encoding.arguments)
        let decoded = try Self.decodeAll(path)
        let ffmpeg = try TestAudio.ffmpegDecode(path)
        #expect(decoded.samples.count == ffmpeg.count)
        let matchesDecoder = zip(decoded.samples, ffmpeg).allSatisfy { abs($0 - $1) < 1e-6 }
        #expect(matchesDecoder)
    }

    @Test func buffersLastHalfASecondToTwoSeconds() throws {
        let path = try TestAudio.encode(try Self.reference(), as: "flac", arguments: ["-c:a", "flac"])
        let sizes = try Self.decodeAll(path).bufferFrames
        #expect(sizes.dropLast().allSatisfy { (22_050...88_200).contains($0) }, "\(sizes)")
    }

    @Test(arguments: ["flac", "wav", "alac.m4a", "aiff"])
    func seeksAreSampleAccurate(fileExtension: String) throws {
        let reference = try Self.reference()
        let encoding = TestAudio.encodings.first { $0.fileExtension == fileExtension }!
        let path = try TestAudio.encode(reference, as: fileExtension, arguments: encoding.arguments)
        let expected = try WAVFileReader(path: reference).samples
        let source = try AudioFileSource(location: path)
        for target in [100_003, 7, 44_100, 0, 145_000] {
            try source.seek(toFrame: Int64(target))
            let buffer = try #require(try source.nextSampleBuffer())
            #expect(buffer.presentationTime == MediaTime(value: Int64(target), timescale: 44_100))
            let samples = Self.interleavedFloats(buffer)
            let count = min(samples.count, expected.count - target * 2, 2_000)
            let difference = mismatch(samples[0..<count], expected[(target * 2)..<(target * 2 + count)])
            #expect(difference == nil, "\(fileExtension) seek to \(target): \(difference ?? "")")
        }
    }

    @Test(arguments: ["mp3", "m4a", "ogg"])
    func lossySeeksLandOnTheSameSamplesAsLinearDecoding(fileExtension: String) throws {
        let encoding = TestAudio.encodings.first { $0.fileExtension == fileExtension }!
        let path = try TestAudio.encode(try Self.reference(), as: fileExtension, arguments: encoding.arguments)
        let linear = try Self.decodeAll(path).samples
        let source = try AudioFileSource(location: path)
        for target in [100_003, 50_000] {
            try source.seek(toFrame: Int64(target))
            let buffer = try #require(try source.nextSampleBuffer())
            #expect(buffer.presentationTime == MediaTime(value: Int64(target), timescale: 44_100))
            let samples = Self.interleavedFloats(buffer)
            let count = min(samples.count, 4_000)
            let difference = zip(samples[0..<count], linear[(target * 2)..<(target * 2 + count)]).map { abs($0 - $1) }.max() ?? 1
            #expect(difference < 1e-3, "\(fileExtension) seek to \(target) differs by \(difference)")
        }
    }

    @Test func readsTagsAndArtwork() throws {
        let reference = try Self.reference()
        let cover = TestAudio.path("cover.png")
        try ExternalTool.check("ffmpeg", ["-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "color=red:s=16x16", "-frames:v", "1", cover])
        for fileExtension in ["flac", "mp3", "m4a"] {
            let output = TestAudio.path("tagged.\(fileExtension)")
            try ExternalTool.check("ffmpeg", ["-nostdin", "-loglevel", "error", "-y", "-i", reference, "-i", cover, "-map", "0:a", "-map", "1:v",
                                              "-c:v", fileExtension == "m4a" ? "png" : "copy", "-disposition:v", "attached_pic"] + (fileExtension == "m4a" ? ["-movie_timescale", "44100"] : []) + [
                                              "-metadata", "title=Sweep Ü", "-metadata", "artist=The Testers", "-metadata", "album=Fixtures", output])
            let source = try AudioFileSource(location: output)
            #expect(source.metadata.title == "Sweep Ü", "\(fileExtension)")
            #expect(source.metadata.artist == "The Testers", "\(fileExtension)")
            #expect(source.metadata.album == "Fixtures", "\(fileExtension)")
            #expect(source.metadata.duration == MediaTime(value: Int64(Self.referenceFrames), timescale: 44_100), "\(fileExtension): \(source.metadata.duration)")
            let artwork = try #require(source.metadata.artwork, "\(fileExtension) artwork")
            #expect(artwork.mimeType == "image/png" && artwork.data.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        }
    }
}
