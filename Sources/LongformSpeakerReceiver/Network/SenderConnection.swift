import Crypto
import Logging
import LongformCore
import LongformSpeakerProtocol
import NIOCore
import Synchronization

/// One sender's TCP connection: bytes into frames, frames into the session, the session's answers
/// back; the speaker's status every second and after each read that brought a quarter second of
/// audio; reading paused while the buffer is full (TCP's flow control then holds the sender), and
/// for 10 ms after each read of a fill that streams in far ahead over a slow link (`ReadPacing`);
/// closed after 10 s with nothing received (a half-open connection) or
/// on a protocol error, which is logged with the peer's address. The buffer survives a close.
/// Until it is the sender it is pending (`ConnectionAdmission`): closed 5 s after it opened
/// whatever it sends, or earlier when newer connections crowd it out. Its warnings go through the
/// service's rate limit.
/// A speaker with a pairing secret challenges the sender's hello and, once it has proven that it
/// knows the secret, seals and opens every later frame (docs/speaker-protocol.md, "Pairing").
final class SenderConnection: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// A connection silent this long is gone.
    static let idleLimit = TimeAmount.nanoseconds(Int64(SpeakerFrame.idleLimitNanoseconds))

    private let service: SpeakerService
    private let logger = Logger(label: "longform.speaker")
    /// On the event loop only.
    private var decoder = SpeakerFrameDecoder(maximumPayloadLength: SpeakerFrame.maximumGreetingPayloadLength)
    private var isActiveSender = false
    private var lastReceived = NIODeadline.now()
    private var statusTask: Scheduled<Void>?
    private var isReadingPaused = false
    /// Whether a read waits a little after the last (a fill over a slow link, far ahead).
    private var pacing = ReadPacing()
    private var roomCheck: Scheduled<Void>?
    /// Closes this connection if it is still pending when its handshake time is up.
    private var handshakeCheck: Scheduled<Void>?
    private var warnedTypes = Set<UInt8>()
    private var framesSinceStatus = 0
    /// When the last status went, and whether it said the speaker was ready to play.
    private var lastStatusSent = NIODeadline.now()
    private var sentReadyToPlay: Bool?
    private var peer = "?"
    /// The pairing of this connection, with the service's secret (set in `init`).
    private var pairing = SpeakerPairing(secret: nil)
    /// Seals what this side sends once the sender has paired.
    private var sealer: FrameSealer?

    init(service: SpeakerService) {
        self.service = service
        pairing = SpeakerPairing(secret: service.pairingSecret)
    }

    func channelActive(context: ChannelHandlerContext) {
        peer = context.remoteAddress.map { "\($0)" } ?? "?"
        lastReceived = .now()
        service.connectionOpened(self, channel: context.channel, peer: peer)
        handshakeCheck = context.eventLoop.scheduleTask(in: SpeakerService.handshakeLimit) { [service] in service.expireHandshakes() }
        scheduleTick(context: context)
    }

    /// Queues the next `everyTick`: soon while the speaker has not said it is ready to play (a
    /// start waits for that), a second later once it has.
    private func scheduleTick(context: ChannelHandlerContext) {
        statusTask = context.eventLoop.scheduleTask(in: sentReadyToPlay == true ? Self.readyTick : Self.tick) { [weak self] in
            guard let self, context.channel.isActive else { return }
            everyTick(context: context)
            // A tick that closed the connection (idle) queues no other.
            if context.channel.isActive { scheduleTick(context: context) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        statusTask?.cancel()
        roomCheck?.cancel()
        handshakeCheck?.cancel()
        statusTask = nil
        roomCheck = nil
        handshakeCheck = nil
        service.connectionClosed(self)
        if case .challenged(let name) = pairing.state {
            service.warn("speaker: \(peer) (\(name)) left without proving the pairing secret; this speaker requires a secret")
        }
        if isActiveSender {
            service.senderLeft(self)
            logger.info("speaker: sender \(peer) left; playing on from the buffer")
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastReceived = .now()
        let bytes = unwrapInboundIn(data)
        pacing.received(byteCount: bytes.readableBytes)
        decoder.append(bytes.readableBytesView)
        processFrames(context: context)
    }

    /// Decodes and applies frames while the buffer has room for the largest one; the rest wait in
    /// the decoder (and in the socket: reading pauses) until the output has played some.
    private func processFrames(context: ChannelHandlerContext) {
        do {
            while !mustWaitForRoom(), let frame = try decoder.nextFrame() {
                switch frame {
                case .message(let message): handle(message, context: context)
                case .unknown(let type, let length):
                    if warnedTypes.insert(type).inserted { service.warn("speaker: \(peer) sent message type 0x\(String(type, radix: 16)) (\(length) bytes), unknown here; skipped") }
                }
                guard context.channel.isActive else { return }
            }
        } catch {
            refuse("speaker: \(peer): \(error); closing", code: 400, message: "\(error)", context: context)
            return
        }
        // A status once a quarter second of audio has come tells the sender how far its audio
        // has got, so that it keeps little in flight and a control message never waits behind
        // much audio; one for all the frames of a read, not one per quarter second in it.
        if framesSinceStatus > 0, let rate = service.session.withLock({ $0.format?.sampleRate }), framesSinceStatus >= Int(rate) / 4 {
            framesSinceStatus = 0
            sendStatus(service.updateSession { $0.status() }, context: context)
        }
        updateReading(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        defer { context.fireChannelReadComplete() }
        guard case .wait(let isFirstInAWhile) = pacing.readEnded(at: HostClock.now(), isFarAhead: isFarAhead) else { return }
        if isFirstInAWhile {
            logger.debug("speaker: audio streams in from \(peer) far ahead of what plays; reading it every \(ReadPacing.interval / 1_000_000) ms")
        }
        applyReading(context: context)
        context.eventLoop.scheduleTask(in: .nanoseconds(Int64(ReadPacing.interval))) { [weak self] in
            guard let self, context.channel.isActive else { return }
            pacing.waitEnded(at: HostClock.now())
            applyReading(context: context)
        }
    }

    /// With a secret, a sender's hello is answered with a challenge and heard only after its proof
    /// (`SpeakerPairing`). Returns the message to handle now, if any.
    private func pair(_ message: SpeakerMessage, context: ChannelHandlerContext) -> SpeakerMessage? {
        switch pairing.receive(message) {
        case .deliver(let message):
            return message
        case .challenge(let nonce):
            send(.challenge(nonce: nonce), context: context)
            return nil
        case .paired(let hello, let keys):
            decoder.opener = FrameOpener(key: keys.senderToSpeaker)
            sealer = FrameSealer(key: keys.speakerToSender)
            if case .hello(_, let name, _) = hello { logger.info("speaker: \(peer) (\(name)) proved the pairing secret; the connection is encrypted") }
            return hello
        case .refuse(let refusal):
            let why = switch refusal {
            case .secretMismatch: "its pairing secret does not match"
            case .notPaired(let type): "it sent \(type) without pairing; this speaker requires a secret"
            case .alreadyRefused: "it sent \(message.type) after its refusal"
            }
            refuse("speaker: refused \(peer): \(why)", code: refusal.code, message: refusal.reason, context: context)
            return nil
        }
    }

    private func handle(_ received: SpeakerMessage, context: ChannelHandlerContext) {
        guard let message = pair(received, context: context) else { return }
        if case .hello(_, let name, let timingPort) = message {
            switch service.becomeSender(self, name: name) {
            case .accepted: break
            case .busy(let senderName):
                refuse("speaker: refused \(peer) (\(name)): busy with another sender", code: 409,
                       message: "busy: playing for \(senderName)", context: context)
                return
            case .late:
                refuse("speaker: refused \(peer) (\(name)): its hello came too late", code: 408,
                       message: "too late: a connection must become the sender within \(SpeakerService.handshakeLimit.nanoseconds / 1_000_000_000) s", context: context)
                return
            }
            isActiveSender = true
            decoder.maximumPayloadLength = SpeakerFrame.maximumPayloadLength
            logger.info("speaker: sender \(name) at \(peer)")
            if let host = context.remoteAddress?.ipAddress {
                service.clockTarget(host: host, port: Int(timingPort))
            }
        } else if !isActiveSender {
            refuse("speaker: \(peer) sent \(message.type) before hello; closing", code: 400, message: "hello first", context: context)
            return
        }
        let actions: [SpeakerSession.Action]
        if case .audio(let firstFrame, let frameCount, let samples) = message {
            // PCM is decoded before the lock the output thread takes; a compressed block is kept
            // as it came, and decoded when the output reads it.
            let format = service.session.withLock { $0.format }
            let received: Result<[SpeakerSession.Action], SpeakerSession.AudioRefusal> = if format?.encoding.isCompressed == true {
                .success(service.updateSession { $0.receiveBlock(samples, frameCount: Int(frameCount), at: firstFrame) })
            } else {
                SpeakerSession.decodeAudio(frameCount: frameCount, samples: samples, format: format).map { frames in
                    service.updateSession { $0.receiveAudio(frames, at: firstFrame) }
                }
            }
            switch received {
            case .success(let stored):
                actions = stored
                framesSinceStatus += Int(frameCount)
            case .failure(let refusal): actions = [.close(reason: refusal.reason)]
            }
        } else {
            if case .format(let format) = message {
                logger.info("speaker: a stream of \(format.sampleRate) Hz, \(format.channelCount) channels, \(format.encoding)")
            } else if case .metadata(let title, let artist, let album) = message {
                logger.info("speaker: now playing \(title) — \(artist) (\(album))")
            } else if case .anchor(let anchor) = message, logger.logLevel <= .debug {
                // Only when logged: the lead takes the lock the output renders under.
                let now = service.session.withLock { $0.clock.networkTime(fromLocal: HostClock.now()) }
                let lead = now.map { "\(Double(Int64(bitPattern: anchor.networkTime &- $0)) / 1e6) ms ahead" } ?? "no clock yet"
                logger.debug("speaker: anchor rate \(anchor.rate) from frame \(anchor.mediaFrame) at network time \(anchor.networkTime) (\(lead))")
            } else if case .flush(let requestID, let fromFrame) = message {
                logger.debug("speaker: flush \(requestID) from frame \(fromFrame)")
            } else if case .artwork(let mimeType, let data) = message {
                // The digest tells a picture apart in the log (and lets a test check its bytes).
                let digest = SHA256.hash(data: data).prefix(8).map { String(cFormat: "%02x", $0) }.joined()
                logger.info("speaker: \(data.isEmpty ? "no artwork" : "artwork \(mimeType), \(data.count) bytes, SHA-256 \(digest)…")")
            }
            actions = service.updateSession { $0.receive(message) }
        }
        for action in actions {
            switch action {
            case .send(let reply): send(reply, context: context)
            case .close(let reason): refuse("speaker: \(peer): \(reason); closing", code: 400, message: reason, context: context)
            }
        }
    }

    private func send(_ message: SpeakerMessage, context: ChannelHandlerContext) {
        let bytes = sealer?.seal(message) ?? message.encoded()
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    private func refuse(_ logLine: String, code: UInt16, message: String, context: ChannelHandlerContext) {
        service.warn(logLine)
        send(.error(code: code, message: message), context: context)
        context.close(promise: nil)
    }

    /// How often the connection looks at its peer and its readiness until its last status said
    /// ready to play (then `readyTick`).
    static let tick = TimeAmount.milliseconds(100)
    /// Between checks once the last status said ready to play: a playing speaker's event loop
    /// then wakes for the sender's audio and once a second, not ten times (as often as the audio
    /// came a block at a time); it stops being ready only when its clock or its output fails.
    static let readyTick = TimeAmount.seconds(1)
    /// A status goes to the sender every second (at the check a second after the last, even if
    /// its timer fires a little early), and at the first check after the speaker becomes ready to
    /// play or stops being so: a start waits for every speaker's.
    static let statusInterval = TimeAmount.seconds(1)

    private func everyTick(context: ChannelHandlerContext) {
        // While reading is paused on purpose, silence from the sender is ours, not a dead peer.
        if isReadingPaused { lastReceived = .now() }
        if NIODeadline.now() - lastReceived > Self.idleLimit {
            service.warn("speaker: nothing from \(peer) for 10 s; closing")
            context.close(promise: nil)
            return
        }
        guard isActiveSender else { return }
        // Read with the output just before (see `SpeakerService.updateSession`), once a tick.
        let (status, readFailure) = service.updateSession { ($0.status(), $0.buffer?.takeReadFailure()) }
        if let readFailure { service.warn("speaker: played silence for audio from \(peer): \(readFailure)") }
        guard case .status(let report) = status, NIODeadline.now() - lastStatusSent >= Self.statusInterval - .milliseconds(50) || report.isSynchronized != sentReadyToPlay else { return }
        sendStatus(status, context: context)
    }

    /// Sends `status` (a `.status` message) and notes whether it said the speaker was ready to play.
    private func sendStatus(_ status: SpeakerMessage, context: ChannelHandlerContext) {
        if case .status(let report) = status { sentReadyToPlay = report.isSynchronized }
        lastStatusSent = .now()
        logger.trace("speaker: status \(status)") // (each tick: too many for debug)
        send(status, context: context)
    }

    /// Whether this connection's frames must wait for room: only the sender's (its audio fills the
    /// buffer); a pending one's hello is heard in its time limit however full the buffer is.
    private func mustWaitForRoom() -> Bool { isActiveSender && isBufferFull() }

    /// Whether the buffer has less room than `SpeakerFrame.readingRoomFrames`.
    private func isBufferFull() -> Bool {
        service.session.withLock { session in
            guard let buffer = session.buffer, let format = session.format else { return false }
            return buffer.room < SpeakerFrame.readingRoomFrames(capacityFrames: buffer.capacityFrames, bytesPerFrame: format.bytesPerFrame)
        }
    }

    /// Whether the buffer holds `ReadPacing.leadSeconds` beyond the next frame to play.
    private func isFarAhead() -> Bool {
        guard isActiveSender else { return false }
        return service.session.withLock { session in
            guard let buffer = session.buffer, let format = session.format, !buffer.isEmpty else { return false }
            let next = max(session.nextFrame ?? buffer.startFrame, buffer.startFrame)
            return buffer.endFrame - next >= ReadPacing.leadSeconds * Int64(format.sampleRate)
        }
    }

    /// Reads while neither the buffer is full nor reads are being paced.
    private func applyReading(context: ChannelHandlerContext) {
        let isReading = !isReadingPaused && !pacing.isWaiting
        if context.channel.isActive { _ = context.channel.setOption(ChannelOptions.autoRead, value: isReading) }
    }

    /// Pauses reading while the buffer is full; one check every 50 ms then resumes it.
    private func updateReading(context: ChannelHandlerContext) {
        let isFull = mustWaitForRoom()
        if isFull != isReadingPaused {
            isReadingPaused = isFull
            applyReading(context: context)
        }
        guard isFull, roomCheck == nil else { return }
        roomCheck = context.eventLoop.scheduleTask(in: .milliseconds(50)) { [weak self] in
            guard let self else { return }
            roomCheck = nil
            guard context.channel.isActive else { return }
            processFrames(context: context)
        }
    }
}
