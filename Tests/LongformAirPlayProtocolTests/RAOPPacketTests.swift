import LongformAirPlayProtocol
import Testing

@Suite("RAOP packets")
struct RAOPPacketTests {
    @Test("an uncompressed ALAC frame: the 23-bit header, big-endian samples, the end tag")
    func alacFrame() {
        let samples: [Int16] = [1, -1, 0x1234, -32768]
        let bytes = samples.withUnsafeBufferPointer { ALACUncompressedFrame.encode($0, frameCount: 2) }
        // Worked by hand: 001 0000 000000000000 0 00 1, then 0001 FFFF 1234 8000, then 111, padded.
        #expect(bytes == [0x20, 0x00, 0x02, 0x00, 0x03, 0xFF, 0xFE, 0x24, 0x69, 0x00, 0x01, 0xC0])
        #expect(ALACUncompressedFrame.byteCount(frameCount: 352) == 1412)
    }

    @Test("an RTP packet: version 2, type 96, the marker, sequence, time and source big-endian")
    func rtpPacket() throws {
        let packet = RTPAudioPacket(sequenceNumber: 0x0102, timestamp: 0x03040506, synchronizationSource: 0x0708090A, isMarked: true, payload: [0xAA])
        #expect(packet.encoded() == [0x80, 0xE0, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0xAA])
        #expect(try RTPAudioPacket(parsing: packet.encoded()) == packet)
        #expect(throws: AirPlayProtocolError.self) { try RTPAudioPacket(parsing: [0x80, 0x60]) }
    }

    @Test("NTP time: seconds since 1900 and a binary fraction, back to the same nanosecond")
    func ntpTime() {
        let time = NTPTimestamp(hostTime: 5_500_000_000)
        #expect(time.seconds == 2_208_988_805 && time.fraction == 1 << 31)
        #expect(NTPTimestamp(hostTime: 123_456_789_012).hostTime == 123_456_789_012)
        #expect(NTPTimestamp(rawValue: time.rawValue) == time)
    }

    @Test("a timing request's transmit time is echoed beside the answer's own times")
    func timing() throws {
        let sent = NTPTimestamp(seconds: 10, fraction: 20)
        let request = RAOPTimingPacket.request(sentAt: sent)
        #expect(request.count == 32)
        let transmitted = try #require(RAOPTimingPacket.requestTransmitTime(in: request))
        #expect(transmitted == sent)
        let reply = RAOPTimingPacket.reply(toRequestSentAt: transmitted, receivedAt: NTPTimestamp(seconds: 30, fraction: 40), sentAt: NTPTimestamp(seconds: 50, fraction: 60))
        #expect(reply == [0x80, 0xD3, 0, 7, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 20, 0, 0, 0, 30, 0, 0, 0, 40, 0, 0, 0, 50, 0, 0, 0, 60])
        #expect(RAOPTimingPacket.requestTransmitTime(in: reply) == nil)
        #expect(RAOPTimingPacket.requestTransmitTime(in: request.prefix(31)) == nil)
    }

    @Test("a sync packet: the frame heard plus 11,025, the moment on the sender's clock, 77,175 more")
    func sync() {
        let packet = RAOPControlPacket.sync(heardRTPTime: 100_000, at: NTPTimestamp(seconds: 1, fraction: 2), isFirst: true)
        // 100,000 + 11,025 = 0x1B1B1; + 77,175 = 0x2DF28.
        #expect(packet == [0x90, 0xD4, 0, 7, 0, 0x01, 0xB1, 0xB1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0x02, 0xDF, 0x28])
        #expect(RAOPControlPacket.sync(heardRTPTime: UInt32.max - 5, at: NTPTimestamp(seconds: 0, fraction: 0), isFirst: false)[0...7]
            == [0x80, 0xD4, 0, 7, 0, 0, 0x2B, 0x0B])
    }

    @Test("a resend request is read, and the packet goes back behind 0x80 0xD6")
    func resend() throws {
        let request = try #require(RAOPControlPacket.ResendRequest(parsing: [0x80, 0xD5, 0x00, 0x01, 0xFF, 0xFE, 0x00, 0x03]))
        #expect(request == RAOPControlPacket.ResendRequest(firstSequenceNumber: 0xFFFE, count: 3))
        #expect(RAOPControlPacket.ResendRequest(parsing: [0x80, 0xD4, 0, 1, 0, 0, 0, 1]) == nil)
        let packet: [UInt8] = [0x80, 0x60, 0x12, 0x34, 9, 9]
        #expect(RAOPControlPacket.resent(packet) == [0x80, 0xD6, 0x12, 0x34] + packet)
    }

    @Test("the SDP announces 352-frame ALAC at 16 bits, stereo, 44.1 kHz")
    func sessionDescription() {
        let sdp = RAOPSessionDescription.alac(sessionID: 42, localAddress: "10.0.0.1", remoteAddress: "10.0.0.2")
        #expect(sdp.contains("o=iTunes 42 0 IN IP4 10.0.0.1\r\n"))
        #expect(sdp.contains("a=rtpmap:96 AppleLossless\r\na=fmtp:96 352 0 16 40 10 14 2 255 0 0 44100\r\n"))
    }

    @Test("DMAP metadata nests title, artist and album in an mlit item")
    func dmap() {
        let bytes = DMAPListing.item(title: "Ab", artist: "", album: "C")
        #expect(bytes == Array("mlit".utf8) + [0, 0, 0, 19] + Array("minm".utf8) + [0, 0, 0, 2] + Array("Ab".utf8) + Array("asal".utf8) + [0, 0, 0, 1] + Array("C".utf8))
    }
}
