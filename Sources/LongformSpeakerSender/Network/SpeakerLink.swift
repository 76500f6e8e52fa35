import Foundation
import Logging
import LongformCore
import LongformRoutes
import LongformSpeakerProtocol
import Synchronization

/// The connection to one speaker of a speaker route, kept up on its own threads: it connects
/// (again and again, with backoff, while the speaker is away), says hello with the route's
/// session, sends what the feed has for it, reads the speaker's answers and statuses, sends a
/// keep-alive after 2 s of quiet, and takes 10 s without a word from the speaker as a dead
/// connection (a half-open one: a cut cable, a crashed host).
final class SpeakerLink: @unchecked Sendable {
    /// The speaker.
    let endpoint: SpeakerEndpoint
    private let index: Int
    private let feed: SpeakerFeed
    private let hello: SpeakerMessage
    /// Proven to a speaker that challenges the hello; nil: such a speaker is refused.
    private let pairingSecret: PairingSecret?
    /// The frame from which a speaker that holds nothing of this session starts.
    private let startFrame: @Sendable () -> Int64
    private let thread = RouteThread()
    private let current = Mutex<PosixSocket?>(nil)
    private let logger = Logger(label: LogLabel.speakerRoute)

    /// A link to speaker `index` of `feed` at `endpoint`.
    init(endpoint: SpeakerEndpoint, index: Int, feed: SpeakerFeed, hello: SpeakerMessage, pairingSecret: PairingSecret?,
         startFrame: @escaping @Sendable () -> Int64) {
        self.pairingSecret = pairingSecret
        self.endpoint = endpoint
        self.index = index
        self.feed = feed
        self.hello = hello
        self.startFrame = startFrame
    }

    /// Starts connecting and sending.
    func start() {
        thread.start(name: "longform.route.speaker.\(index)") { [self] thread in
            var backoff = 0.1
            var failures = 0
            while !thread.shouldStop {
                let attempt = HostClock.now()
                do {
                    try runConnection(thread)
                    // A speaker that welcomes and closes at once (it refuses the stream) is not
                    // asked again ten times a second.
                    if HostClock.now() - attempt > 5_000_000_000 { backoff = 0.1; failures = 0 }
                } catch {
                    failures += 1
                    // The first failure and then one a minute or so, not one per attempt.
                    if failures == 1 || failures % 60 == 0 { logger.warning("speaker \(endpoint): \(error); trying again") }
                }
                feed.linkDidDisconnect(index)
                let until = Date(timeIntervalSinceNow: backoff)
                while !thread.shouldStop && Date() < until { Thread.sleep(forTimeInterval: 0.05) }
                backoff = min(backoff * 2, 1)
            }
        }
    }

    /// Closes the connection and stops; returns once the link's threads have finished.
    func stop() {
        thread.stop(waiting: false)
        current.withLock { $0?.shutdown() }
        thread.stop(waiting: true)
    }

    /// Why a connection ended.
    struct LinkError: Error, CustomStringConvertible {
        var description: String
    }

    /// One connection, from connect to its end; throws when it failed before the speaker said welcome.
    private func runConnection(_ thread: RouteThread) throws {
        let socket = try PosixSocket.connect(host: endpoint.host, port: endpoint.port, timeout: 2)
        socket.setTimeouts(seconds: 0.25)
        current.withLock { $0 = socket }
        defer {
            socket.shutdown()
            current.withLock { $0 = nil }
        }
        let lastReceived = Atomic<UInt64>(HostClock.now())
        let isAlive: @Sendable () -> Bool = {
            // The time last heard is read before the clock: the reader may store a later one meanwhile.
            let heard = lastReceived.load(ordering: .relaxed)
            return !thread.shouldStop && HostClock.now() &- heard < SpeakerFrame.idleLimitNanoseconds
        }
        try socket.sendAll(hello.encoded(), while: isAlive)

        // The welcome (after pairing, if the speaker asks for it: `SenderPairing`), read here; then the rest on a reader thread.
        var decoder = SpeakerFrameDecoder()
        var pairing = SenderPairing(hello: hello, secret: pairingSecret)
        var sealer: FrameSealer?
        var welcome: (name: String, capacity: UInt64, end: Int64)?
        let deadline = HostClock.now() + 5_000_000_000
        while welcome == nil {
            guard isAlive(), HostClock.now() < deadline else { throw LinkError(description: "no welcome within 5 s") }
            guard let bytes = try socket.receive() else { continue }
            guard !bytes.isEmpty else { throw LinkError(description: "closed before welcome") }
            decoder.append(bytes)
            while welcome == nil, let frame = try decoder.nextFrame() {
                guard case .message(let message) = frame else { continue }
                switch pairing.receive(message) {
                case .prove(let proof, let keys):
                    try socket.sendAll(proof.encoded(), while: isAlive)
                    // From here on both directions are sealed: the welcome opens only if the speaker knows the secret too.
                    sealer = FrameSealer(key: keys.senderToSpeaker)
                    decoder.opener = FrameOpener(key: keys.speakerToSender)
                case .welcomed(let name, let capacity, let end): welcome = (name, capacity, end)
                case .fail(let reason): throw LinkError(description: reason)
                case .ignore: continue
                }
            }
        }
        lastReceived.store(HostClock.now(), ordering: .relaxed)
        let initial = feed.linkDidConnect(index, bufferEndFrame: welcome!.end, capacityFrames: welcome!.capacity, startFrame: startFrame())
        logger.info("speaker \(endpoint): connected to \(welcome!.name)\(pairing.isEncrypted ? " (paired, encrypted)" : "")\(welcome!.end >= 0 ? ", resuming after frame \(welcome!.end)" : "")")

        let readerDone = DispatchSemaphore(value: 0)
        let closeReason = Mutex<String?>(nil)
        let reader = Thread { [self, decoder] in
            var decoder = decoder
            defer { readerDone.signal() }
            do {
                while isAlive() {
                    if try drain(&decoder) { continue }
                    guard let bytes = try socket.receive() else { continue }
                    guard !bytes.isEmpty else { closeReason.withLock { $0 = "closed by the speaker" }; return }
                    lastReceived.store(HostClock.now(), ordering: .relaxed)
                    decoder.append(bytes)
                }
            } catch {
                closeReason.withLock { $0 = "\(error)" }
            }
        }
        reader.name = "longform.route.speaker.\(index).read"
        reader.start()
        defer {
            socket.shutdown()
            readerDone.wait()
            if let reason = closeReason.withLock({ $0 }), !thread.shouldStop { logger.warning("speaker \(endpoint): \(reason); reconnecting") }
        }

        var lastSent = HostClock.now()
        let send: ([SpeakerMessage]) throws -> Void = { messages in
            for message in messages { try socket.sendAll(sealer?.seal(message) ?? message.encoded(), while: isAlive) }
            lastSent = HostClock.now()
        }
        do {
            try send(initial)
            while isAlive() && closeReason.withLock({ $0 }) == nil {
                switch feed.nextWork(for: index, timeout: 0.25) {
                case .messages(let messages): try send(messages)
                case .idle:
                    if HostClock.now() - lastSent >= SpeakerFrame.keepAliveIntervalNanoseconds { try send([.keepAlive]) }
                }
            }
        } catch {
            closeReason.withLock { $0 = $0 ?? "\(error)" }
        }
        if !thread.shouldStop { closeReason.withLock { $0 = $0 ?? "nothing from the speaker for 10 s" } }
    }

    /// Applies the complete frames the decoder holds; whether there were any.
    private func drain(_ decoder: inout SpeakerFrameDecoder) throws -> Bool {
        var any = false
        while let frame = try decoder.nextFrame() {
            any = true
            guard case .message(let message) = frame else { continue }
            switch message {
            case .flushResult(let id, let isAccepted, let first): feed.record(answer: isAccepted, firstUnplayedFrame: first, ofRequest: id, from: index)
            case .status(let status): feed.record(status: status, from: index)
            case .error(let code, let text): logger.warning("speaker \(endpoint) reported error \(code): \(text)")
            default: continue
            }
        }
        return any
    }
}
