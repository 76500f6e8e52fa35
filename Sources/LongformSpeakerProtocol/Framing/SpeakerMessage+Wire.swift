extension SpeakerMessage {
    /// The message as one frame: header and payload.
    public func encoded() -> [UInt8] {
        let payload = encodedPayload()
        return SpeakerFrame.header(type: type, payloadLength: payload.count) + payload
    }

    /// The message's payload, without the frame header (what a sealed frame encrypts after the type).
    func encodedPayload() -> [UInt8] {
        var payload = ByteWriter()
        switch self {
        case .hello(let sessionID, let senderName, let timingPort):
            payload.append(bytes: sessionID.prefix(16) + [UInt8](repeating: 0, count: max(0, 16 - sessionID.count)))
            payload.append(senderName)
            payload.append(timingPort)
        case .welcome(let speakerName, let capacity, let end):
            payload.append(speakerName)
            payload.append(capacity)
            payload.append(end)
        case .challenge(let nonce):
            payload.append(bytes: nonce)
        case .proof(let nonce, let proof):
            payload.append(bytes: nonce)
            payload.append(bytes: proof)
        case .format(let format):
            payload.append(format.sampleRate)
            payload.append(format.channelCount)
            payload.append(format.encoding.rawValue)
        case .audio(let firstFrame, let frameCount, let samples):
            payload.append(firstFrame)
            payload.append(frameCount)
            payload.append(bytes: samples)
        case .anchor(let anchor):
            payload.append(anchor.rate)
            payload.append(anchor.mediaFrame)
            payload.append(anchor.networkTime)
        case .flush(let requestID, let fromFrame):
            payload.append(requestID)
            payload.append(fromFrame)
        case .flushResult(let requestID, let isAccepted, let firstUnplayedFrame):
            payload.append(requestID)
            payload.append(UInt8(isAccepted ? 1 : 0))
            payload.append(firstUnplayedFrame)
        case .volume(let speaker, let group):
            payload.append(speaker)
            payload.append(group)
        case .metadata(let title, let artist, let album):
            payload.append(title)
            payload.append(artist)
            payload.append(album)
        case .artwork(let mimeType, let data):
            payload.append(mimeType)
            payload.append(bytes: data)
        case .keepAlive:
            break
        case .status(let status):
            payload.append(status.bufferEndFrame)
            payload.append(status.nextFrame)
            payload.append(status.clockOffset)
            payload.append(status.clockUncertainty)
            payload.append(UInt8((status.isSynchronized ? 1 : 0) | (status.isPlaying ? 2 : 0)))
        case .error(let code, let message):
            payload.append(code)
            payload.append(message)
        }
        return payload.bytes
    }

    /// Decodes a known message's payload; nil for a type this version does not know.
    static func decode(type: UInt8, payload: ArraySlice<UInt8>) throws(SpeakerProtocolError) -> SpeakerMessage? {
        var reader = ByteReader(payload, type: type)
        let message: SpeakerMessage
        switch type {
        case 0x01:
            message = .hello(sessionID: Array(try reader.readBytes(16)), senderName: try reader.readString(), timingPort: try reader.read())
        case 0x02:
            message = .welcome(speakerName: try reader.readString(), bufferCapacityFrames: try reader.read(), bufferEndFrame: try reader.read())
        case 0x03:
            message = .challenge(nonce: Array(try reader.readBytes(PairingHandshake.nonceLength)))
        case 0x04:
            message = .proof(nonce: Array(try reader.readBytes(PairingHandshake.nonceLength)), proof: Array(try reader.readBytes(PairingHandshake.proofLength)))
        case 0x10:
            let sampleRate: UInt32 = try reader.read()
            let channels: UInt8 = try reader.read()
            let encodingValue: UInt8 = try reader.read()
            guard let encoding = AudioStreamFormat.Encoding(rawValue: encodingValue) else {
                throw .malformedPayload(type: type, reason: "unknown sample encoding \(encodingValue)")
            }
            guard (8_000...384_000).contains(sampleRate), (1...8).contains(channels) else {
                throw .malformedPayload(type: type, reason: "\(sampleRate) Hz, \(channels) channels is not a format a speaker plays")
            }
            message = .format(AudioStreamFormat(sampleRate: sampleRate, channelCount: channels, encoding: encoding))
        case 0x11:
            let firstFrame: Int64 = try reader.read()
            let frameCount: UInt32 = try reader.read()
            guard firstFrame >= 0 else { throw .malformedPayload(type: type, reason: "audio at frame \(firstFrame), before the stream's start") }
            // Its first frame checked before its end is summed: near Int64.max the sum overflowed.
            try checkMediaFrame(firstFrame, type: type)
            try checkMediaFrame(firstFrame + Int64(frameCount), type: type)
            message = .audio(firstFrame: firstFrame, frameCount: frameCount, samples: Array(reader.readRest()))
        case 0x12:
            let rate = try reader.readDouble()
            guard rate.isFinite, rate >= 0, rate <= 8 else { throw .malformedPayload(type: type, reason: "rate \(rate)") }
            let mediaFrame: Int64 = try reader.read()
            try checkMediaFrame(mediaFrame, type: type)
            message = .anchor(RateAnchor(rate: rate, mediaFrame: mediaFrame, networkTime: try reader.read()))
        case 0x13:
            let requestID: UInt32 = try reader.read()
            let fromFrame: Int64 = try reader.read()
            try checkMediaFrame(fromFrame, type: type)
            message = .flush(requestID: requestID, fromFrame: fromFrame)
        case 0x14:
            message = .flushResult(requestID: try reader.read(), isAccepted: try reader.read(UInt8.self) != 0, firstUnplayedFrame: try reader.read())
        case 0x20:
            let speaker = try reader.readFloat()
            let group = try reader.readFloat()
            guard speaker.isFinite, group.isFinite, (0...1).contains(speaker), (0...1).contains(group) else {
                throw .malformedPayload(type: type, reason: "volume \(speaker), group volume \(group) outside 0...1")
            }
            message = .volume(speaker: speaker, group: group)
        case 0x21:
            message = .metadata(title: try reader.readString(), artist: try reader.readString(), album: try reader.readString())
        case 0x22:
            message = .artwork(mimeType: try reader.readString(), data: Array(reader.readRest()))
        case 0x30:
            message = .keepAlive
        case 0x31:
            let end: Int64 = try reader.read()
            let next: Int64 = try reader.read()
            let offset: Int64 = try reader.read()
            let uncertainty: UInt64 = try reader.read()
            let flags: UInt8 = try reader.read()
            message = .status(SpeakerStatus(bufferEndFrame: end, nextFrame: next, clockOffset: offset, clockUncertainty: uncertainty,
                                            isSynchronized: flags & 1 != 0, isPlaying: flags & 2 != 0))
        case 0x3F:
            message = .error(code: try reader.read(), message: try reader.readString())
        default:
            return nil
        }
        try reader.finish()
        return message
    }

    /// Throws for a media frame outside `0...SpeakerFrame.maximumMediaFrame`.
    private static func checkMediaFrame(_ frame: Int64, type: UInt8) throws(SpeakerProtocolError) {
        guard (0...SpeakerFrame.maximumMediaFrame).contains(frame) else {
            throw .malformedPayload(type: type, reason: "media frame \(frame) is outside 0...2^53")
        }
    }
}
