import LongformCore
import LongformSpeakerProtocol
import NIOCore

/// One connection of a `SpeakerLink`, in its channel's pipeline: the hello, the greeting
/// (`SenderPairing`), then the feed's work written while the connection takes it, and the
/// speaker's answers and statuses handed to the feed. After `IdleStateHandler`: quiet for 2 s
/// sends a keep-alive; nothing heard for 10 s closes the connection.
final class SpeakerLinkHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The feed has work for this link (sent by `SpeakerLink.wakeOnWork`).
    struct FeedHasWork: Sendable {}

    private let link: SpeakerLink
    private var decoder = SpeakerFrameDecoder()
    private var pairing: SenderPairing
    private var sealer: FrameSealer?
    private var isWelcomed = false
    private var welcomeDeadline: Scheduled<Void>?
    /// Why the connection ended, for the log.
    private var closeReason: String?
    /// Whether a turn of `pump` is queued on the event loop.
    private var isPumpScheduled = false

    init(link: SpeakerLink) {
        self.link = link
        pairing = SenderPairing(hello: link.hello, secret: link.pairingSecret)
    }

    func channelActive(context: ChannelHandlerContext) {
        // A connection made as its link was stopped says nothing: its hello would reach the
        // speaker with a session that is over.
        guard !link.isStopping else {
            close("the route stopped", context: context)
            return
        }
        write(link.hello.encoded(), context: context)
        context.flush()
        let loop = context.eventLoop.assumeIsolated()
        welcomeDeadline = loop.scheduleTask(in: .seconds(5)) { [self] in close("no welcome within 5 s", context: context) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        welcomeDeadline?.cancel()
        let reason = closeReason ?? (isWelcomed ? "closed by the speaker" : "closed before welcome")
        if link.isStopping {
            // Closed by the stop: nothing failed, and nothing is tried again.
        } else if !isWelcomed {
            link.connectionDidFail(SpeakerLink.LinkError(description: reason))
        } else {
            link.logger.warning("speaker \(link.endpoint): \(reason); reconnecting")
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        decoder.append(buffer.readableBytesView)
        do {
            while let frame = try decoder.nextFrame() {
                guard case .message(let message) = frame else { continue }
                if isWelcomed { handle(message) } else { greet(message, context: context) }
                guard context.channel.isActive else { return }
            }
        } catch {
            close("\(error)", context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is FeedHasWork {
            pump(context: context)
        } else if let idle = event as? IdleStateHandler.IdleStateEvent {
            switch idle {
            case .write where isWelcomed: send([.keepAlive], context: context)
            case .read: close("nothing from the speaker for 10 s", context: context)
            default: break
            }
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        // Not at once: this may come from within a flush of this link's (see `pump`).
        if context.channel.isWritable { schedulePump(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        close("\(error)", context: context)
    }

    /// A message before the welcome: the greeting's.
    private func greet(_ message: SpeakerMessage, context: ChannelHandlerContext) {
        switch pairing.receive(message) {
        case .prove(let proof, let keys):
            write(proof.encoded(), context: context)
            context.flush()
            // From here on both directions are sealed: the welcome opens only if the speaker knows the secret too.
            sealer = FrameSealer(key: keys.senderToSpeaker)
            decoder.opener = FrameOpener(key: keys.speakerToSender)
        case .welcomed(let name, let capacity, let end):
            isWelcomed = true
            welcomeDeadline?.cancel()
            let initial = link.feed.linkDidConnect(link.index, bufferEndFrame: end, capacityFrames: capacity, startFrame: link.startFrame())
            link.logger.info("speaker \(link.endpoint): connected to \(name)\(pairing.isEncrypted ? " (paired, encrypted)" : "")\(end >= 0 ? ", resuming after frame \(end)" : "")")
            send(initial, context: context)
            link.wakeOnWork(of: context.channel)
            pump(context: context)
        case .fail(let reason):
            close(reason, context: context)
        case .ignore:
            break
        }
    }

    /// A message after the welcome: answers and statuses go to the feed.
    private func handle(_ message: SpeakerMessage) {
        switch message {
        case .flushResult(let id, let isAccepted, let first):
            link.feed.record(answer: isAccepted, firstUnplayedFrame: first, ofRequest: id, from: link.index)
        case .status(let status):
            link.feed.record(status: status, from: link.index)
        case .error(let code, let text):
            link.logger.warning("speaker \(link.endpoint) reported error \(code): \(text)")
        default:
            break
        }
    }

    /// Writes the feed's work for this link while the connection takes it, `piecesPerTurn` at a
    /// time, the next turn queued behind what the event loop holds: the links share the loop,
    /// and a link that pumped on from within its own flush (which can call
    /// `channelWritabilityChanged`) would hold the others' anchors back behind a whole refill.
    private func pump(context: ChannelHandlerContext) {
        guard isWelcomed else { return }
        var pieces = 0
        while pieces < Self.piecesPerTurn, context.channel.isWritable, let messages = link.feed.takeWork(for: link.index) {
            for message in messages { write(sealer?.seal(message) ?? message.encoded(), context: context) }
            pieces += 1
            // Control messages at once: an anchor does not wait while the audio after it is
            // encoded. Audio goes with the turn's other pieces, so that the speaker wakes once for
            // them, not once for each.
            if !Self.isAudio(messages) { context.flush() }
        }
        if pieces > 0 { context.flush() }
        if pieces == Self.piecesPerTurn { schedulePump(context: context) } // more may wait
    }

    /// Whether a piece of work is one audio message.
    private static func isAudio(_ messages: [SpeakerMessage]) -> Bool {
        guard messages.count == 1, case .audio = messages[0] else { return false }
        return true
    }

    /// Queues a turn of `pump` on the event loop, once.
    private func schedulePump(context: ChannelHandlerContext) {
        guard !isPumpScheduled else { return }
        isPumpScheduled = true
        context.eventLoop.assumeIsolated().execute { [self] in
            isPumpScheduled = false
            guard context.channel.isActive else { return }
            pump(context: context)
        }
    }

    /// The most pieces of work (a piece: a link's control messages, or one audio message of 4,096
    /// frames) a link writes before the other links on its event loop have their turn.
    static let piecesPerTurn = 4

    private func send(_ messages: [SpeakerMessage], context: ChannelHandlerContext) {
        for message in messages { write(sealer?.seal(message) ?? message.encoded(), context: context) }
        context.flush()
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    private func close(_ reason: String, context: ChannelHandlerContext) {
        closeReason = closeReason ?? reason
        context.close(promise: nil)
    }
}
