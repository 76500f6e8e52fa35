import Logging
import LongformCore
import LongformRendering
import LongformSpeakerProtocol
import NIOCore
import NIOPosix
import Synchronization

/// `longform speaker`: a network speaker. It listens for one sender at a time (TCP), asks that
/// sender's timing port for the clock (UDP), and plays what it is sent to a local route at the
/// times the anchors say. The rules are `SpeakerSession`'s; this type wires them to sockets and
/// to the route.
public final class SpeakerService: @unchecked Sendable {
    /// The session: the buffer, the anchor, the clock.
    let session: LockedSession
    private let route: any AudioRoute
    private let output: SpeakerOutput
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let logger = Logger(label: "longform.speaker")
    private let sender = Mutex<(connection: ObjectIdentifier, name: String)?>(nil)
    /// The connections not yet the sender, and how to close each (the sender's too).
    private let connections = Mutex(Connections())
    /// Warnings about connections: at most a few a minute, whatever strangers send.
    private let warnings = Mutex(WarningRateLimit())
    private var serverChannel: (any Channel)?
    private var warningReport: RepeatedTask?
    private let clockRequester: ClockRequester

    /// The secret a sender must prove it knows, or nil to take any sender.
    let pairingSecret: PairingSecret?

    /// A speaker with `configuration` playing to `route` (started by `start`); with a
    /// `pairingSecret`, only senders that know it are heard, and their connections are encrypted.
    public init(configuration: SpeakerSession.Configuration, route: any AudioRoute, pairingSecret: PairingSecret? = nil) {
        self.pairingSecret = pairingSecret
        var configuration = configuration
        configuration.outputSampleRate = route.format.sampleRate
        session = LockedSession(SpeakerSession(configuration: configuration))
        self.route = route
        output = SpeakerOutput(session: session, route: route)
        clockRequester = ClockRequester(session: session, key: pairingSecret.map(ClockKey.init))
    }

    /// The sender's name while one is connected.
    public var senderName: String? { sender.withLock { $0?.name } }

    /// The session's current state, for status displays and tests.
    public func withSession<T>(_ body: (inout SpeakerSession) -> T) -> T { session.withLock(body) }

    /// Runs `body` on the session (a message from the sender, a status) with the output's first
    /// changeable frame and whether it plays read just before, and rewinds the output when `body`
    /// changed what it holds.
    func updateSession<T>(_ body: (inout SpeakerSession) -> T) -> T {
        let changeable = output.firstChangeableFrame, isOutputRunning = route.clock.isRunning
        let (result, rewind) = session.withLock { session in
            session.changeableOutputFrame = changeable
            session.isOutputRunning = isOutputRunning
            let result = body(&session)
            return (result, session.takeRewindRequest())
        }
        // Outside the lock: the route's thread takes it to render again.
        if let rewind { output.rewind(toFrame: rewind) }
        return result
    }

    /// Starts the route and listens on `host`:`port` (0: any free port); returns the port.
    public func start(host: String, port: Int) throws -> Int {
        try route.start(pullingFrom: output)
        clockRequester.start()
        // A window's suppressed warnings are reported within a second of its end.
        warningReport = group.next().scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { [weak self] _ in
            guard let self else { return }
            if let count = warnings.withLock({ $0.endedWindowSuppressions(at: Self.now()) }) { reportSuppressed(count) }
        }
        serverChannel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(SenderConnection(service: self)) }
            }
            .bind(host: host, port: port).wait()
        return serverChannel?.localAddress?.port ?? port
    }

    /// Stops listening, the clock and the route.
    public func stop() {
        warningReport?.cancel()
        if let count = warnings.withLock({ $0.takeSuppressed() }) { reportSuppressed(count) }
        try? serverChannel?.close().wait()
        try? group.syncShutdownGracefully()
        clockRequester.stop()
        route.stop(waiting: true)
    }

    /// The admission of connections and each open one's channel and peer, under one lock.
    private struct Connections {
        var admission = ConnectionAdmission<ObjectIdentifier>()
        var open: [ObjectIdentifier: (channel: any Channel, peer: String)] = [:]
    }

    /// The clock connections' deadlines are on (nanoseconds, never going back).
    private static func now() -> UInt64 { NIODeadline.now().uptimeNanoseconds }

    /// How long a connection has to become the sender before it is closed.
    static var handshakeLimit: TimeAmount { .nanoseconds(Int64(ConnectionAdmission<ObjectIdentifier>.standardHandshakeLimit)) }

    /// `connection` opened on `channel` from `peer`: it waits for its hello; the oldest waiting
    /// ones over the cap are closed (never the new one: a real sender's hello comes at once).
    func connectionOpened(_ connection: SenderConnection, channel: any Channel, peer: String) {
        let id = ObjectIdentifier(connection)
        let actions = connections.withLock { state in
            state.open[id] = (channel, peer)
            return state.admission.opened(id, at: Self.now())
        }
        perform(actions)
    }

    /// `connection` is closed: it no longer counts.
    func connectionClosed(_ connection: SenderConnection) {
        let id = ObjectIdentifier(connection)
        connections.withLock { state in
            state.open[id] = nil
            state.admission.closed(id)
        }
    }

    /// Closes the connections that did not become the sender in time.
    func expireHandshakes() {
        perform(connections.withLock { $0.admission.expire(at: Self.now()) })
    }

    /// Closes what the admission says, each with a (rate-limited) warning. Outside the lock: a
    /// close on the event loop calls `connectionClosed` at once.
    private func perform(_ actions: [ConnectionAdmission<ObjectIdentifier>.Action]) {
        for case .close(let id, let reason) in actions {
            guard let (channel, peer) = connections.withLock({ $0.open[id] }) else { continue }
            switch reason {
            case .crowdedOut:
                warn("speaker: closed \(peer): \(ConnectionAdmission<ObjectIdentifier>.standardMaximumPending) newer connections came while it waited for its hello")
            case .handshakeTimedOut:
                warn("speaker: closed \(peer): no \(pairingSecret == nil ? "hello" : "hello and pairing") within \(Self.handshakeLimit.nanoseconds / 1_000_000_000) s")
            }
            channel.close(promise: nil)
        }
    }

    /// Logs a warning about a connection, unless too many came lately (then they are counted and
    /// the count is logged once the window ends).
    func warn(_ line: @autoclosure () -> String) {
        let decision = warnings.withLock { $0.warning(at: Self.now()) }
        if decision.suppressedBefore > 0 { reportSuppressed(decision.suppressedBefore) }
        if decision.write { logger.warning("\(line())") }
    }

    /// Logs how many warnings about connections were not logged.
    private func reportSuppressed(_ count: Int) {
        logger.warning("speaker: \(count) more warnings about connections not logged (at most \(WarningRateLimit.standardMaximumLines) a minute)")
    }

    /// What a connection's claim to be the sender came to.
    enum SenderClaim: Equatable {
        /// It is the sender.
        case accepted
        /// Another connection is the sender, named.
        case busy(String)
        /// It is being closed: crowded out or out of time.
        case late
    }

    /// Makes `connection` the sender unless another one is or its handshake time is up.
    func becomeSender(_ connection: SenderConnection, name: String) -> SenderClaim {
        sender.withLock { sender in
            let id = ObjectIdentifier(connection)
            if let current = sender, current.connection != id { return .busy(current.name) }
            if sender == nil {
                guard connections.withLock({ $0.admission.admit(id, at: Self.now()) }) else { return .late }
            }
            sender = (id, name)
            return .accepted
        }
    }

    /// `connection` is gone: another sender may come.
    func senderLeft(_ connection: SenderConnection) {
        sender.withLock { sender in
            if sender?.connection == ObjectIdentifier(connection) { sender = nil }
        }
        clockRequester.clearTarget()
    }

    /// Clock requests go to `host` (a numeric address) and `port` from now on.
    func clockTarget(host: String, port: Int) {
        clockRequester.setTarget(host: host, port: port)
    }
}
