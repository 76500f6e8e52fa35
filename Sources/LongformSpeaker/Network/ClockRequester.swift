import Logging
import LongformCore
import LongformSpeakerProtocol
import NIOCore
import Synchronization

/// Asks the sender's timing port for its clock: ten times a second while the estimate is poor or
/// young, once a second after; takes only replies that match a request it sent.
final class ClockRequester: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private let session: LockedSession
    private let logger = Logger(label: "longform.speaker.clock")
    /// On the event loop only.
    private var target: SocketAddress?
    private var outstanding: [UInt32: UInt64] = [:]
    private var sequence: UInt32 = 0
    private var requestsSent = 0
    private var context: ChannelHandlerContext?
    private var task: RepeatedTask?

    init(session: LockedSession) {
        self.session = session
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        task = context.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(100), delay: .milliseconds(100)) { [weak self] _ in self?.tick() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        task?.cancel()
        self.context = nil
    }

    /// Where requests go from now on (nil: nowhere). On the event loop.
    func setTarget(_ address: SocketAddress?) {
        target = address
        outstanding.removeAll()
        requestsSent = 0
    }

    private func tick() {
        guard let target, let context else { return }
        let isGood = session.withLock { $0.clock.isGood }
        // Ten a second for the first 10 s and while poor; then one a second.
        requestsSent += 1
        if isGood && requestsSent > 100 && requestsSent % 10 != 0 { return }
        sequence &+= 1
        let now = HostClock.now()
        outstanding[sequence] = now
        if outstanding.count > 32, let oldest = outstanding.keys.min() { outstanding.removeValue(forKey: oldest) }
        let bytes = ClockExchange.encode(ClockExchange.Request(sequence: sequence, t1: now))
        let envelope = AddressedEnvelope(remoteAddress: target, data: context.channel.allocator.buffer(bytes: bytes))
        context.writeAndFlush(wrapOutboundOut(envelope), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let arrived = HostClock.now()
        let envelope = unwrapInboundIn(data)
        guard envelope.remoteAddress == target, let reply = ClockExchange.decodeReply(envelope.data.readableBytesView),
              outstanding.removeValue(forKey: reply.sequence) == reply.t1 else {
            // Not an answer to a request of ours: dropped without a word (a flood costs nothing).
            return
        }
        session.withLock { $0.receiveClockReply(reply, at: arrived) }
    }
}
