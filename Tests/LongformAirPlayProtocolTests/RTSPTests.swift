import LongformAirPlayProtocol
import Testing

@Suite("RTSP messages")
struct RTSPTests {
    @Test("a request is written with its headers in order and the body's length")
    func requestEncoding() {
        var headers = RTSPHeaders()
        headers.add("CSeq", "3")
        let request = RTSPRequest(method: "SET_PARAMETER", uri: "rtsp://10.0.0.1/7", contentType: "text/parameters", text: "volume: -15.0\r\n", headers: headers)
        #expect(String(decoding: request.encoded(), as: UTF8.self)
            == "SET_PARAMETER rtsp://10.0.0.1/7 RTSP/1.0\r\nCSeq: 3\r\nContent-Type: text/parameters\r\nContent-Length: 15\r\n\r\nvolume: -15.0\r\n")
    }

    @Test("responses that arrive in pieces, two in one read, and with bodies are each read whole")
    func responsesInPieces() throws {
        let text = "RTSP/1.0 200 OK\r\nCSeq: 1\r\nAudio-Latency: 11025\r\n\r\nRTSP/1.0 453 Not Enough Bandwidth\r\nCSeq: 2\r\nContent-Length: 5\r\n\r\nhello"
        var parser = RTSPResponseParser()
        var responses: [RTSPResponse] = []
        for byte in text.utf8 {
            parser.append([byte])
            while let response = try parser.nextResponse() { responses.append(response) }
        }
        #expect(responses.count == 2)
        #expect(responses[0].statusCode == 200 && responses[0].headers["audio-latency"] == "11025" && responses[0].body.isEmpty)
        #expect(responses[1].statusLine == "453 Not Enough Bandwidth" && responses[1].body == Array("hello".utf8))
    }

    @Test("bytes that are not RTSP, and a header block without end, are errors that say so")
    func malformedResponses() {
        var parser = RTSPResponseParser()
        parser.append(Array("GARBAGE 200 OK\r\n\r\n".utf8))
        #expect(throws: AirPlayProtocolError.malformedResponse("status line 'GARBAGE 200 OK'")) { try parser.nextResponse() }
        var endless = RTSPResponseParser()
        endless.append(Array(repeating: UInt8(ascii: "a"), count: RTSPResponseParser.maximumHeaderBytes + 1))
        #expect(throws: AirPlayProtocolError.responseTooLarge(bytes: RTSPResponseParser.maximumHeaderBytes)) { try endless.nextResponse() }
        var huge = RTSPResponseParser()
        huge.append(Array("RTSP/1.0 200 OK\r\nContent-Length: 99999999\r\n\r\n".utf8))
        #expect(throws: AirPlayProtocolError.responseTooLarge(bytes: RTSPResponseParser.maximumBodyBytes)) { try huge.nextResponse() }
    }

    @Test("a SETUP answer's Transport header gives the receiver's ports")
    func transport() throws {
        let transport = try RTSPTransport(parsing: "RTP/AVP/UDP;unicast;interleaved=0-1;mode=record;control_port=6101;timing_port=6102;server_port=6103")
        #expect(transport == RTSPTransport(serverPort: 6103, controlPort: 6101, timingPort: 6102))
        #expect(throws: AirPlayProtocolError.self) { try RTSPTransport(parsing: "RTP/AVP/UDP;unicast;timing_port=6102") }
    }

    @Test("a Digest challenge is answered as RFC 2617 without qop computes it")
    func digest() throws {
        let challenge = try #require(RTSPDigestChallenge(parsing: #"Digest realm="raop", nonce="0123456789abcdef""#))
        #expect(challenge == RTSPDigestChallenge(realm: "raop", nonce: "0123456789abcdef"))
        // MD5(MD5("iTunes:raop:secret") ":" nonce ":" MD5("ANNOUNCE:rtsp://10.0.0.1/1234")), by Python's hashlib.
        #expect(challenge.authorization(method: "ANNOUNCE", uri: "rtsp://10.0.0.1/1234", password: "secret")
            == #"Digest username="iTunes", realm="raop", nonce="0123456789abcdef", uri="rtsp://10.0.0.1/1234", response="5f9ef19fd0aad19fe9ea5bec3235637c""#)
        #expect(RTSPDigestChallenge(parsing: "Basic realm=x") == nil)
    }
}
