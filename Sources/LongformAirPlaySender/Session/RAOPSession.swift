import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Logging
import LongformAirPlayProtocol
import LongformCore
import LongformRendering
import LongformSpeakerProtocol
import Synchronization

/// One receiver's AirPlay 1 (RAOP) session: the RTSP control connection, and the UDP sockets for
/// its audio (to its server port), control (sync packets out, resend requests in) and timing
/// (its clock requests, answered from the host clock). Opened in one call; every later RTSP
/// request goes through a serial queue so that the route's thread never waits on the network but
/// for a flush.
final class RAOPSession: @unchecked Sendable {
    /// The receiver, as errors and logs name it.
    let receiverName: String

    private let connection: RTSPConnection
    private let sessionURL: String
    private let audioSocket: PosixSocket
    private let controlSocket: PosixSocket
    private let timingSocket: PosixSocket
    private let history: RAOPPacketHistory
    private let requests: DispatchQueue
    private let isClosed = Atomic<Bool>(false)
    private let isCheckingAlive = Atomic<Bool>(false)
    private let pendingVolume = Mutex<Float?>(nil)
    private let logger = Logger(label: LogLabel.airPlayRoute)

    private init(receiverName: String, connection: RTSPConnection, sessionURL: String,
                 audioSocket: PosixSocket, controlSocket: PosixSocket, timingSocket: PosixSocket, history: RAOPPacketHistory) {
        self.receiverName = receiverName
        self.connection = connection
        self.sessionURL = sessionURL
        self.audioSocket = audioSocket
        self.controlSocket = controlSocket
        self.timingSocket = timingSocket
        self.history = history
        requests = DispatchQueue(label: "longform.airplay.rtsp.\(receiverName)")
    }

    /// The headers every request carries: a sender names itself, and a receiver that offers remote
    /// control learns where (AirPlay senders send these four; some receivers refuse without them).
    static func commonHeaders(clientID: UInt64) -> RTSPHeaders {
        let hex = String(clientID, radix: 16, uppercase: true)
        return RTSPHeaders([
            ("User-Agent", "Longform/1.0"),
            ("Client-Instance", hex),
            ("DACP-ID", hex),
            ("Active-Remote", String(UInt32(truncatingIfNeeded: clientID))),
        ])
    }

    /// Opens a session: OPTIONS, ANNOUNCE (ALAC, 16-bit stereo at `sampleRate`), SETUP with this
    /// end's control and timing ports, RECORD from `firstSequenceNumber` and `firstRTPTime`;
    /// `opening` cancelled closes the connection and the open fails.
    static func open(host: String, port: Int, receiverName: String, password: String?, clientID: UInt64, sampleRate: Int,
                     firstSequenceNumber: UInt16, firstRTPTime: UInt32, history: RAOPPacketHistory, opening: SessionOpening) throws(AirPlayError) -> RAOPSession {
        let connection = try RTSPConnection.connect(to: host, port: port, receiverName: receiverName, password: password,
                                                    commonHeaders: commonHeaders(clientID: clientID))
        guard opening.adopt(connection) else { throw AirPlayError(receiver: receiverName, reason: "stopped while connecting") }
        do throws(AirPlayError) {
            let controlSocket: PosixSocket, timingSocket: PosixSocket
            do {
                controlSocket = try PosixSocket.boundDatagramSocket()
                timingSocket = try PosixSocket.boundDatagramSocket()
            } catch {
                throw AirPlayError(receiver: receiverName, reason: "no UDP port: \(error)")
            }
            timingSocket.stampArrivals()
            try connection.send(RTSPRequest(method: "OPTIONS", uri: "*"))
            let sessionID = UInt32.random(in: 1...UInt32.max)
            let sessionURL = "rtsp://\(bracketed(connection.localAddress))/\(sessionID)"
            let sdp = RAOPSessionDescription.alac(sessionID: sessionID, localAddress: connection.localAddress, remoteAddress: connection.remoteAddress, sampleRate: sampleRate)
            try connection.send(RTSPRequest(method: "ANNOUNCE", uri: sessionURL, contentType: "application/sdp", text: sdp))
            var setupHeaders = RTSPHeaders()
            setupHeaders.add("Transport", RTSPTransport.request(controlPort: controlSocket.localPort, timingPort: timingSocket.localPort))
            let setup = try connection.send(RTSPRequest(method: "SETUP", uri: sessionURL, headers: setupHeaders))
            let transport: RTSPTransport
            do {
                transport = try RTSPTransport(parsing: setup.headers["Transport"] ?? "")
            } catch {
                throw AirPlayError(receiver: receiverName, reason: "SETUP: \(error)")
            }
            let audioSocket: PosixSocket
            do {
                audioSocket = try PosixSocket.connectedDatagramSocket(host: connection.remoteAddress, port: transport.serverPort)
                try controlSocket.connect(toHost: connection.remoteAddress, port: transport.controlPort)
            } catch {
                throw AirPlayError(receiver: receiverName, reason: "UDP: \(error)")
            }
            var recordHeaders = RTSPHeaders()
            recordHeaders.add("Range", "npt=0-")
            recordHeaders.add("RTP-Info", "seq=\(firstSequenceNumber);rtptime=\(firstRTPTime)")
            // Its Audio-Latency (shairport: 11,025) is the fixed latency sync packets already count on.
            try connection.send(RTSPRequest(method: "RECORD", uri: sessionURL, headers: recordHeaders))
            let session = RAOPSession(receiverName: receiverName, connection: connection, sessionURL: sessionURL,
                                      audioSocket: audioSocket, controlSocket: controlSocket, timingSocket: timingSocket, history: history)
            session.startServing()
            return session
        } catch {
            connection.close()
            throw error
        }
    }

    private static func bracketed(_ address: String) -> String { address.contains(":") ? "[\(address)]" : address }

    /// Whether the RTSP connection is open (a receiver that went away closed it, or stopped answering).
    var isConnected: Bool { !isClosed.load(ordering: .relaxed) && connection.isActive }

    /// Sends one audio packet.
    func send(_ packet: [UInt8]) { audioSocket.sendDatagram(packet) }

    /// Sends a sync packet.
    func sendSync(_ packet: [UInt8]) { controlSocket.sendDatagram(packet) }

    /// Flushes the receiver's buffer: it drops what it holds and waits for the packets from
    /// `sequenceNumber` and `rtpTime` on. Waits for the answer (up to `timeout` seconds), so that
    /// the packets sent next are not dropped with the old ones.
    func flush(sequenceNumber: UInt16, rtpTime: UInt32, timeout: Double = 0.5) throws(AirPlayError) {
        var headers = RTSPHeaders()
        headers.add("RTP-Info", "seq=\(sequenceNumber);rtptime=\(rtpTime)")
        let request = RTSPRequest(method: "FLUSH", uri: sessionURL, headers: headers)
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<Void, AirPlayError>?>(nil)
        requests.async { [connection] in
            do throws(AirPlayError) {
                try connection.send(request)
                result.withLock { $0 = .success(()) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else {
            throw AirPlayError(receiver: receiverName, reason: "FLUSH not answered within \(timeout) s")
        }
        try result.withLock { $0 }?.get()
    }

    /// Sets the receiver's volume: `volume` from 0 to 1 as AirPlay's −30 to 0 dB, 0 as mute (−144).
    /// The last volume is the one sent: a slider dragged does not queue a request per step.
    func setVolume(_ volume: Float) {
        let isQueued = pendingVolume.withLock { pending in defer { pending = volume }; return pending != nil }
        guard !isQueued else { return }
        requests.async { [self] in
            guard let latest = pendingVolume.withLock({ pending in defer { pending = nil }; return pending }) else { return }
            let text = "volume: \(String(format6: Self.airPlayVolume(latest)))\r\n"
            do throws(AirPlayError) { try connection.send(RTSPRequest(method: "SET_PARAMETER", uri: sessionURL, contentType: "text/parameters", text: text)) } catch {
                logger.warning("\(error)")
            }
        }
    }

    /// Asks the receiver for an answer (OPTIONS), unless one is awaited: one that goes away
    /// without closing the connection (power, Wi-Fi) leaves it open, and only an unanswered
    /// request (`RTSPConnection.answerTimeout`) closes it, so that its link connects again.
    func checkAlive() {
        guard !isCheckingAlive.exchange(true, ordering: .relaxed) else { return }
        requests.async { [self] in
            _ = try? connection.send(RTSPRequest(method: "OPTIONS", uri: "*"), acceptingFailure: true)
            isCheckingAlive.store(false, ordering: .relaxed)
        }
    }

    /// AirPlay's volume for a linear 0–1 one: −30 dB to 0 dB on a log scale, −144 for silence.
    static func airPlayVolume(_ volume: Float) -> Double {
        guard volume > 0 else { return -144 }
        // 20·log10(volume), held to AirPlay's −30 dB floor.
        return max(-30, min(0, 20 * Double(log10f(volume))))
    }

    /// Sends the title, artist and album (DMAP) and the artwork.
    func setNowPlaying(_ info: NowPlayingInfoSnapshot, rtpTime: UInt32) {
        var headers = RTSPHeaders()
        headers.add("RTP-Info", "rtptime=\(rtpTime)")
        var metadata = RTSPRequest(method: "SET_PARAMETER", uri: sessionURL, headers: headers,
                                   body: DMAPListing.item(title: info.title, artist: info.artist, album: info.album))
        metadata.headers["Content-Type"] = "application/x-dmap-tagged"
        sendLater(metadata)
        if let artwork = info.artwork {
            var picture = RTSPRequest(method: "SET_PARAMETER", uri: sessionURL, headers: headers, body: artwork.data)
            picture.headers["Content-Type"] = artwork.mimeType
            sendLater(picture)
        }
    }

    /// Sends `request` on the serial queue; a failure is logged (the connection's loss is seen by `isConnected`).
    private func sendLater(_ request: RTSPRequest) {
        requests.async { [connection, logger] in
            do throws(AirPlayError) { try connection.send(request) } catch { logger.warning("\(error)") }
        }
    }

    /// Ends the session: TEARDOWN (not waited for long), then closes the connection and sockets.
    func close() {
        guard !isClosed.exchange(true, ordering: .relaxed) else { return }
        let done = DispatchSemaphore(value: 0)
        requests.async { [connection, sessionURL] in
            if connection.isActive { _ = try? connection.send(RTSPRequest(method: "TEARDOWN", uri: sessionURL), acceptingFailure: true) }
            connection.close()
            done.signal()
        }
        _ = done.wait(timeout: .now() + 1)
        connection.close()
        controlSocket.shutdown()
        timingSocket.shutdown()
        audioSocket.shutdown()
    }

    // MARK: - The control and timing ports

    /// Starts the two threads that answer the receiver: its clock requests and its resend requests.
    private func startServing() {
        DetachedThread.start(name: "longform.airplay.timing") { [self] in serveTiming() }
        DetachedThread.start(name: "longform.airplay.control") { [self] in serveControl() }
    }

    /// Answers each clock request with its arrival time and the time of the answer (host clock as NTP).
    private func serveTiming() {
        timingSocket.setTimeouts(seconds: 0.25)
        while !isClosed.load(ordering: .relaxed) {
            guard let datagram = timingSocket.receiveDatagram(maximumLength: 128) else { continue }
            guard let transmitted = RAOPTimingPacket.requestTransmitTime(in: datagram.bytes) else { continue }
            let reply = RAOPTimingPacket.reply(toRequestSentAt: transmitted, receivedAt: NTPTimestamp(hostTime: datagram.receivedAt),
                                               sentAt: NTPTimestamp(hostTime: HostClock.now()))
            timingSocket.sendDatagram(reply, to: datagram.sender, length: datagram.senderLength)
        }
    }

    /// Sends again each packet the receiver asks for, from the route's history.
    private func serveControl() {
        controlSocket.setTimeouts(seconds: 0.25)
        while !isClosed.load(ordering: .relaxed) {
            guard let datagram = controlSocket.receiveDatagram(maximumLength: 128),
                  let request = RAOPControlPacket.ResendRequest(parsing: datagram.bytes) else { continue }
            var missing = 0
            for offset in 0..<request.count {
                let sequenceNumber = request.firstSequenceNumber &+ offset
                if let packet = history.packet(sequenceNumber) { controlSocket.sendDatagram(RAOPControlPacket.resent(packet)) } else { missing += 1 }
            }
            logger.debug("\(receiverName): resent \(Int(request.count) - missing) of \(request.count) packets from \(request.firstSequenceNumber)")
        }
    }
}

/// What plays now, as a session sends it (the route's `NowPlayingInfo`).
typealias NowPlayingInfoSnapshot = LongformRendering.NowPlayingInfo

extension String {
    /// `value` with up to six decimals, as `text/parameters` carries numbers.
    init(format6 value: Double) {
        let scaled = (value * 1_000_000).rounded()
        let whole = Int64(scaled / 1_000_000)
        var fraction = abs(Int64(scaled) % 1_000_000)
        var digits = ""
        for _ in 0..<6 { digits = String(fraction % 10) + digits; fraction /= 10 }
        self = (scaled < 0 && whole == 0 ? "-" : "") + "\(whole).\(digits)"
    }
}
