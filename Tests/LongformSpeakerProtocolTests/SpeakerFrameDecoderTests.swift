import LongformSpeakerProtocol
import Testing

/// The stream framing: every message survives the wire in pieces of any size, and hostile bytes are
/// refused by name before a byte of an absurd payload is awaited.
@Suite struct SpeakerFrameDecoderTests {
    static let everyMessage: [SpeakerMessage] = [
        .hello(sessionID: Array(0..<16), senderName: "Living room sender", timingPort: 7000),
        .welcome(speakerName: "Kitchen ♪", bufferCapacityFrames: 44_100 * 180, bufferEndFrame: -1),
        .format(AudioStreamFormat(sampleRate: 44_100, channelCount: 2, encoding: .signed16)),
        .format(AudioStreamFormat(sampleRate: 48_000, channelCount: 2, encoding: .flac)),
        .audio(firstFrame: 123_456_789, frameCount: 3, samples: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
        .anchor(RateAnchor(rate: 1, mediaFrame: 44_100, networkTime: 9_876_543_210)),
        .flush(requestID: 7, fromFrame: 88_200),
        .flushResult(requestID: 7, isAccepted: false, firstUnplayedFrame: 90_000),
        .volume(speaker: 0.5, group: 0.25),
        .metadata(title: "Título", artist: "Ann", album: ""),
        .artwork(mimeType: "image/png", data: [0x89, 0x50, 0x4E, 0x47]),
        .keepAlive,
        .status(SpeakerStatus(bufferEndFrame: 1_000_000, nextFrame: 500, clockOffset: -12_345, clockUncertainty: 40_000, isSynchronized: true, isPlaying: false)),
        .error(code: 409, message: "busy: playing for Living room sender"),
    ]

    @Test func everyMessageComesBackWhateverPiecesTheStreamArrivesIn() throws {
        let stream = Self.everyMessage.flatMap { $0.encoded() }
        for pieceSize in [1, 2, 3, 7, 8, 9, 64, stream.count] {
            var decoder = SpeakerFrameDecoder()
            var decoded: [SpeakerMessage] = []
            var offset = 0
            while offset < stream.count {
                decoder.append(stream[offset..<min(offset + pieceSize, stream.count)])
                offset += pieceSize
                while let frame = try decoder.nextFrame() {
                    guard case .message(let message) = frame else { Issue.record("unexpected \(frame)"); continue }
                    decoded.append(message)
                }
            }
            #expect(decoded == Self.everyMessage, "pieces of \(pieceSize) bytes")
            #expect(decoder.bufferedByteCount == 0)
        }
    }

    @Test func hostileBytesAreRefusedByName() {
        func firstError(_ bytes: [UInt8]) -> SpeakerProtocolError? {
            var decoder = SpeakerFrameDecoder()
            decoder.append(bytes)
            do {
                while try decoder.nextFrame() != nil {}
                return nil
            } catch {
                return error
            }
        }
        let good = SpeakerMessage.keepAlive.encoded()
        #expect(firstError(Array("GET / HTTP/1.1\r\n".utf8)) == .badMagic(0x47, 0x45))
        #expect(firstError([0x4C, 0x46, 9, 0x30, 0, 0, 0, 0]) == .unsupportedVersion(9))
        // A peer of version 1 (no FLAC) and this one part with an error naming both versions.
        #expect(firstError([0x4C, 0x46, 1, 0x01, 0, 0, 0, 0]) == .unsupportedVersion(1))
        #expect(SpeakerProtocolError.unsupportedVersion(1).description == "protocol version 1 is not supported (this side speaks 2)")
        #expect(firstError([0x4C, 0x46, 2, 0x10, 0, 0, 0, 6, 0, 0, 0xAC, 0x44, 2, 4]) == .malformedPayload(type: 0x10, reason: "unknown sample encoding 4"))
        // An absurd length is refused from the header alone: nothing waits for 4 GiB.
        #expect(firstError([0x4C, 0x46, 2, 0x11, 0xFF, 0xFF, 0xFF, 0xFF]) == .payloadTooLong(0xFFFF_FFFF))
        // Before hello a speaker takes 4 KiB payloads at most.
        var greeting = SpeakerFrameDecoder(maximumPayloadLength: SpeakerFrame.maximumGreetingPayloadLength)
        greeting.append([0x4C, 0x46, 2, 0x11, 0, 0, 0x10, 0x01])
        #expect(throws: SpeakerProtocolError.payloadTooLong(4_097)) { try greeting.nextFrame() }
        // A known message whose payload is cut short, or has bytes left over.
        #expect(firstError([0x4C, 0x46, 2, 0x13, 0, 0, 0, 3, 1, 2, 3]) == .malformedPayload(type: 0x13, reason: "ends inside a field"))
        #expect(firstError([0x4C, 0x46, 2, 0x30, 0, 0, 0, 1, 0]) == .malformedPayload(type: 0x30, reason: "1 bytes after the last field"))
        // A string that is not UTF-8, a string longer than its payload.
        #expect(firstError([0x4C, 0x46, 2, 0x3F, 0, 0, 0, 5, 0, 1, 0, 1, 0xFF]) == .malformedPayload(type: 0x3F, reason: "a string is not UTF-8"))
        #expect(firstError([0x4C, 0x46, 2, 0x3F, 0, 0, 0, 5, 0, 1, 0xFF, 0xFF, 0x41]) == .malformedPayload(type: 0x3F, reason: "ends inside a field"))
        // Audio whose first frame is near Int64.max: refused by its first frame, not summed with
        // its count first (that overflowed: the speaker-frames fuzzer's crash, now a regression input).
        let farAudio: [UInt8] = [0x4C, 0x46, 2, 0x11, 0, 0, 0, 12, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 1]
        #expect(firstError(farAudio) == .malformedPayload(type: 0x11, reason: "media frame 9223372036854775807 is outside 0...2^53"))
        // Values no speaker can act on.
        let nanRate = SpeakerMessage.anchor(RateAnchor(rate: .nan, mediaFrame: 0, networkTime: 0)).encoded()
        #expect(firstError(nanRate) == .malformedPayload(type: 0x12, reason: "rate nan"))
        let loud = SpeakerMessage.volume(speaker: 7, group: 1).encoded()
        #expect(firstError(loud) == .malformedPayload(type: 0x20, reason: "volume 7.0, group volume 1.0 outside 0...1"))
        let oddFormat = SpeakerMessage.format(AudioStreamFormat(sampleRate: 1, channelCount: 2, encoding: .float32)).encoded()
        #expect(firstError(oddFormat) == .malformedPayload(type: 0x10, reason: "1 Hz, 2 channels is not a format a speaker plays"))
        let far = SpeakerMessage.anchor(RateAnchor(rate: 1, mediaFrame: .max - 1, networkTime: 0)).encoded()
        #expect(firstError(far) == .malformedPayload(type: 0x12, reason: "media frame \(Int64.max - 1) is outside 0...2^53"))
        let lateAudio = SpeakerMessage.audio(firstFrame: 1 << 53, frameCount: 1, samples: [0, 0, 0, 0]).encoded()
        #expect(firstError(lateAudio) == .malformedPayload(type: 0x11, reason: "media frame \((1 << 53) + 1) is outside 0...2^53"))
        let negative = SpeakerMessage.audio(firstFrame: -5, frameCount: 0, samples: []).encoded()
        #expect(firstError(negative) == .malformedPayload(type: 0x11, reason: "audio at frame -5, before the stream's start"))
        // Garbage after a good frame: the good one is decoded first.
        var decoder = SpeakerFrameDecoder()
        decoder.append(good + [0x00, 0x01])
        #expect((try? decoder.nextFrame()) == .message(.keepAlive))
        #expect(throws: SpeakerProtocolError.badMagic(0, 1)) { try decoder.nextFrame() }
    }

    @Test func aTypeFromALaterVersionIsSkipped() throws {
        var decoder = SpeakerFrameDecoder()
        decoder.append([0x4C, 0x46, 2, 0x7E, 0, 0, 0, 3, 9, 9, 9] + SpeakerMessage.keepAlive.encoded())
        #expect(try decoder.nextFrame() == .unknown(type: 0x7E, length: 3))
        #expect(try decoder.nextFrame() == .message(.keepAlive))
        #expect(try decoder.nextFrame() == nil)
    }

    @Test func randomBytesNeverCrashTheDecoder() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var decoder = SpeakerFrameDecoder()
            // Random bytes behind a valid header half the time, so that payload decoding is reached.
            var bytes = (0..<Int.random(in: 0..<64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if Bool.random(using: &generator) {
                let type = [0x01, 0x02, 0x10, 0x11, 0x12, 0x13, 0x14, 0x20, 0x21, 0x22, 0x30, 0x31, 0x3F].randomElement(using: &generator)!
                bytes = [0x4C, 0x46, 2, UInt8(type), 0, 0, 0, UInt8(bytes.count)] + bytes
            }
            decoder.append(bytes)
            while let frame = try? decoder.nextFrame(), frame != nil {}
        }
    }
}
