import Foundation
import Logging
import LongformCore
import Synchronization

/// One receiver of a route: opens its session, sees it lost (the receiver went away, closed the
/// connection or stopped answering) and opens it again, on a thread of its own so that the route's
/// thread never waits for a receiver. The route takes each newly opened session once
/// (`takeNewSession`) to start it with a sync packet.
final class AirPlayReceiverLink: @unchecked Sendable {
    /// The receiver, as errors and logs name it.
    let receiverName: String
    private let open: @Sendable (SessionOpening) throws(AirPlayError) -> RAOPSession
    private let state = Mutex(State())
    private let logger = Logger(label: LogLabel.airPlayRoute)

    private struct State {
        var session: RAOPSession?
        /// The attempt under way, which `stop` ends.
        var opening: SessionOpening?
        var isNew = false
        var isStopped = false
        var lastFailure: String?
    }

    /// The first wait after a failed attempt, and the longest (seconds).
    static let retryDelays = (first: 0.5, longest: 4.0)

    /// A link that opens its sessions with `open`, which gives up when its `SessionOpening` is cancelled.
    init(receiverName: String, open: @escaping @Sendable (SessionOpening) throws(AirPlayError) -> RAOPSession) {
        self.receiverName = receiverName
        self.open = open
    }

    /// Starts connecting, and keeps the receiver connected until `stop`.
    func start() {
        DetachedThread.start(name: "longform.airplay.link") { [self] in run() }
    }

    /// The open session, if there is one.
    var session: RAOPSession? { state.withLock { $0.session } }

    /// The open session if it opened since the last call, else nil.
    func takeNewSession() -> RAOPSession? {
        state.withLock { state in
            guard state.isNew else { return nil }
            state.isNew = false
            return state.session
        }
    }

    /// Why the last attempt failed, if the receiver is not connected.
    var lastFailure: String? { state.withLock { $0.session == nil ? $0.lastFailure : nil } }

    /// Ends the session, or the attempt to open one, and stops trying.
    func stop() {
        let (session, opening) = state.withLock { state in
            state.isStopped = true
            defer { state.session = nil }
            return (state.session, state.opening)
        }
        opening?.cancel()
        session?.close()
    }

    /// How often a connected receiver is asked for an answer (seconds).
    static let aliveCheckInterval = 3.0
    /// How long a connection must last for the next to be tried at once when it ends (seconds).
    static let settledConnection = 5.0

    private func run() {
        var delay = Self.retryDelays.first
        var failures = 0
        var openedAt: UInt64 = 0, nextCheck: UInt64 = 0
        while !state.withLock({ $0.isStopped }) {
            if let session = state.withLock({ $0.session }) {
                if session.isConnected {
                    let now = HostClock.now()
                    if now >= nextCheck {
                        session.checkAlive()
                        nextCheck = now + UInt64(Self.aliveCheckInterval * 1e9)
                    }
                    HostClock.sleep(untilNanoseconds: now + 100_000_000)
                    continue
                }
                state.withLock { $0.session = nil }
                session.close()
                // A receiver that takes the session and drops it is not asked ten times a second.
                let lasted = Double(HostClock.now() - openedAt) / 1e9
                if lasted > Self.settledConnection {
                    delay = Self.retryDelays.first
                    logger.warning("\(receiverName): the connection ended; connecting again")
                } else {
                    if failures == 0 { logger.warning("\(receiverName): the connection ended after \(String(format: "%.1f", lasted)) s; connecting again in \(delay) s") }
                    failures += 1
                    HostClock.sleep(untilNanoseconds: HostClock.now() + UInt64(delay * 1e9))
                    delay = min(delay * 2, Self.retryDelays.longest)
                }
            }
            let opening = SessionOpening()
            guard state.withLock({ state in
                state.opening = opening
                return !state.isStopped
            }) else { return }
            do {
                let session = try open(opening)
                let isStopped = state.withLock { state in
                    state.opening = nil
                    if !state.isStopped {
                        state.session = session
                        state.isNew = true
                        state.lastFailure = nil
                    }
                    return state.isStopped
                }
                if isStopped { session.close(); return }
                if failures > 0 { logger.info("\(receiverName): connected after \(failures) failed attempts") }
                openedAt = HostClock.now()
                nextCheck = openedAt + UInt64(Self.aliveCheckInterval * 1e9)
                failures = 0
            } catch {
                let isStopped = state.withLock { state in
                    state.opening = nil
                    return state.isStopped
                }
                if isStopped { return }
                failures += 1
                let message = error.description
                let isRepeat = state.withLock { state in
                    defer { state.lastFailure = message }
                    return state.lastFailure == message
                }
                if !isRepeat || failures % 30 == 0 { logger.warning("\(message); trying again") }
                HostClock.sleep(untilNanoseconds: HostClock.now() + UInt64(delay * 1e9))
                delay = min(delay * 2, Self.retryDelays.longest)
            }
        }
    }
}
