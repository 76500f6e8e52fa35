import Logging
import LongformCore
import LongformSpeakerProtocol
import NIOCore
import NIOPosix
import Synchronization

/// The connection to one speaker of a speaker route, on SwiftNIO: it connects (again and again,
/// with backoff, while the speaker is away), says hello with the route's session, pairs when the
/// speaker asks, sends what the feed has for it as fast as the connection takes it, reads the
/// speaker's answers and statuses, sends a keep-alive after 2 s of quiet, and takes 10 s without a
/// word from the speaker as a dead connection (a half-open one: a cut cable, a crashed host).
/// Every link of a route runs on one event loop, so a speaker costs no thread.
final class SpeakerLink: Sendable {
    /// The speaker.
    let endpoint: SpeakerEndpoint
    let index: Int
    let feed: SpeakerFeed
    let hello: SpeakerMessage
    /// Proven to a speaker that challenges the hello; nil: such a speaker is refused.
    let pairingSecret: PairingSecret?
    /// The frame from which a speaker that holds nothing of this session starts.
    let startFrame: @Sendable () -> Int64
    let logger = Logger(label: LogLabel.speakerRoute)
    private let eventLoop: any EventLoop
    /// What only the event loop changes, and `stop` reads.
    private let state = Mutex(LinkState())

    private struct LinkState {
        var isStopped = false
        var channel: (any Channel)?
        var reconnect: Scheduled<Void>?
        var policy = ReconnectPolicy()
        /// Whether the current connection was welcomed (see `ReconnectPolicy`).
        var isWelcomed = false
    }

    /// Whether a wake-up from the feed is on its way to one connection's loop: later ones are
    /// folded into it. One per connection, so that a late wake-up of an old one folds nothing.
    private final class WakeFlag: Sendable {
        let isPending = Atomic<Bool>(false)
    }

    /// Why a connection ended.
    struct LinkError: Error, CustomStringConvertible {
        var description: String
    }

    /// A link to speaker `index` of `feed` at `endpoint`, run on `eventLoop`.
    init(endpoint: SpeakerEndpoint, index: Int, feed: SpeakerFeed, hello: SpeakerMessage, pairingSecret: PairingSecret?,
         eventLoop: any EventLoop, startFrame: @escaping @Sendable () -> Int64) {
        self.pairingSecret = pairingSecret
        self.endpoint = endpoint
        self.index = index
        self.feed = feed
        self.hello = hello
        self.eventLoop = eventLoop
        self.startFrame = startFrame
    }

    /// Starts connecting and sending.
    func start() {
        eventLoop.execute { self.connect() }
    }

    /// Closes the connection and stops trying; returns once the connection is closed (at once on
    /// its event loop). A connection still being made is not waited for (a speaker that is down
    /// holds a connect for its 2 s timeout): it closes without a word once made (see
    /// `SpeakerLinkHandler.channelActive`).
    func stop() {
        let channel = state.withLock { state -> (any Channel)? in
            state.isStopped = true
            state.reconnect?.cancel()
            return state.channel
        }
        feed.setWakeHandler(nil, forLink: index)
        guard let channel else { return }
        channel.close(promise: nil)
        // (On an event loop thread a wait would never end: the close runs there.)
        if !channel.eventLoop.inEventLoop { try? channel.closeFuture.wait() }
    }

    /// Whether `stop` was called: a connection that ends is not logged as lost, nor tried again.
    var isStopping: Bool { state.withLock { $0.isStopped } }

    /// One attempt: a connection whose handler does the rest.
    private func connect() {
        guard !isStopping else { return }
        state.withLock { $0.isWelcomed = false }
        let startedAt = NIODeadline.now()
        ClientBootstrap(group: eventLoop)
            .connectTimeout(.seconds(2))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            // No more than one audio message waits here beyond the socket's buffer: a flush or an
            // anchor written next must not wait behind seconds of audio.
            .channelOption(.writeBufferWaterMark, value: .init(low: 16 << 10, high: 32 << 10))
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        IdleStateHandler(readTimeout: .nanoseconds(Int64(SpeakerFrame.idleLimitNanoseconds)),
                                         writeTimeout: .nanoseconds(Int64(SpeakerFrame.keepAliveIntervalNanoseconds))),
                        SpeakerLinkHandler(link: self),
                    ])
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
            .whenComplete { [self] result in
                switch result {
                case .success(let channel):
                    let isStopped = state.withLock { state in
                        if !state.isStopped { state.channel = channel }
                        return state.isStopped
                    }
                    if isStopped { channel.close(promise: nil) }
                    channel.closeFuture.whenComplete { _ in self.connectionDidEnd(startedAt: startedAt) }
                case .failure(let error):
                    connectionDidFail(LinkError(description: "connect to \(endpoint): \(error)"))
                    connectionDidEnd(startedAt: startedAt)
                }
            }
    }

    /// A connection ended before the speaker said welcome: logged once, then once a minute or so.
    func connectionDidFail(_ error: any Error) {
        if state.withLock({ $0.policy.attemptFailed() }) { logger.warning("speaker \(endpoint): \(error); trying again") }
    }

    /// A connection is over (or never was): the next attempt after the policy's delay.
    private func connectionDidEnd(startedAt: NIODeadline) {
        feed.setWakeHandler(nil, forLink: index)
        feed.linkDidDisconnect(index)
        let lasted = NIODeadline.now() - startedAt
        state.withLock { state in
            state.channel = nil
            guard !state.isStopped else { return }
            let delay = state.policy.connectionEnded(wasWelcomed: state.isWelcomed, lastedSeconds: Double(lasted.nanoseconds) / 1e9)
            state.reconnect = eventLoop.scheduleTask(in: .nanoseconds(Int64(delay * 1e9))) { self.connect() }
        }
    }

    /// Has the feed wake `channel`'s handler when it has work for this link (folded: one wake-up
    /// on its way at a time).
    func wakeOnWork(of channel: any Channel) {
        state.withLock { $0.isWelcomed = true }
        let flag = WakeFlag()
        feed.setWakeHandler({
            guard !flag.isPending.exchange(true, ordering: .acquiringAndReleasing) else { return }
            channel.eventLoop.execute {
                flag.isPending.store(false, ordering: .releasing)
                channel.pipeline.fireUserInboundEventTriggered(SpeakerLinkHandler.FeedHasWork())
            }
        }, forLink: index)
    }
}
