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
    private let connectionCount = Atomic<Int>(0)
    /// At most this many connections at once (the sender, and a few refused or waiting).
    static let maximumConnections = 8
    private var serverChannel: (any Channel)?
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
        clockRequester = ClockRequester(session: session)
    }

    /// The sender's name while one is connected.
    public var senderName: String? { sender.withLock { $0?.name } }

    /// The session's current state, for status displays and tests.
    public func withSession<T>(_ body: (inout SpeakerSession) -> T) -> T { session.withLock(body) }

    /// Runs `body` on the session (a message from the sender, a status) with the output's first
    /// changeable frame read just before, and rewinds the output when `body` changed what it holds.
    func updateSession<T>(_ body: (inout SpeakerSession) -> T) -> T {
        let changeable = output.firstChangeableFrame
        let (result, rewind) = session.withLock { session in
            session.changeableOutputFrame = changeable
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
        try? serverChannel?.close().wait()
        try? group.syncShutdownGracefully()
        clockRequester.stop()
        route.stop(waiting: true)
    }

    /// Counts a new connection; false when there are too many.
    func connectionOpened() -> Bool {
        connectionCount.add(1, ordering: .relaxed).newValue <= Self.maximumConnections
    }

    /// Counts a connection gone.
    func connectionClosed() {
        connectionCount.subtract(1, ordering: .relaxed)
    }

    /// Makes `connection` the sender unless another one is; false when busy.
    func becomeSender(_ connection: SenderConnection, name: String) -> Bool {
        sender.withLock { sender in
            let id = ObjectIdentifier(connection)
            if let current = sender, current.connection != id { return false }
            sender = (id, name)
            return true
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
