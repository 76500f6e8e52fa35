import Dispatch
import Logging
import LongformCore
import LongformRoutes
import LongformSpeakerProtocol
import Synchronization

/// Asks the sender's timing port for its clock two hundred times a second at first, then on a
/// quiet network forty and, from 10 s, four; behind jitter, fifty after the first minute
/// (`ClockRequestSchedule`): the estimate takes each leg's floor over the samples of the last
/// 10 s until it knows the clocks' rate (half a minute), of the samples kept after (a minute's, at
/// most 3,072), and the more samples, the closer to the floor under jitter. Takes only replies
/// that match a request it sent.
///
/// On its own thread with a plain UDP socket, not on the event loop that reads the audio: a reply
/// must not wait behind minutes of audio arriving. The system stamps each reply's arrival, so a
/// busy host (the thread woken late) does not read as a slow network, and the thread wakes once an
/// exchange: it sleeps in `poll` until the next request, not until the reply, and reads what came
/// as it wakes. A new target or a stop shuts the socket down to wake it.
final class ClockRequester: Sendable {
    /// Where to ask, as set by the connection; the thread opens a socket for each new one.
    private struct Target {
        var host: String
        var port: Int
    }

    private let session: LockedSession
    /// Tags its requests and checks the replies' tags, for a speaker with a pairing secret.
    private let key: ClockKey?
    private let logger = Logger(label: "longform.speaker.clock")
    private let thread = RouteThread()
    /// The target, a count that changes with each `setTarget` (the same sender again gets a fresh
    /// start), and the socket the thread opened for that count, which a change shuts down.
    private let target = Mutex<(target: Target?, generation: Int, socket: PosixSocket?)>((nil, 0, nil))
    /// Signalled on a new target and on stop: the thread sleeps on it while it has no target.
    private let wake = DispatchSemaphore(value: 0)

    /// A requester for `session`'s clock, tagging with `key` (a paired speaker's); `start()` begins.
    init(session: LockedSession, key: ClockKey?) {
        self.session = session
        self.key = key
    }

    /// Asks `host`:`port` (a numeric address) from now on.
    func setTarget(host: String, port: Int) {
        change(to: Target(host: host, port: port))
        wake.signal()
    }

    /// Stops asking until the next `setTarget`.
    func clearTarget() {
        change(to: nil)
    }

    /// A new generation for `newTarget`; the thread, in `poll` on the old one's socket, wakes.
    private func change(to newTarget: Target?) {
        let socket = target.withLock { state in
            defer { state = (newTarget, state.generation + 1, nil) }
            return state.socket
        }
        socket?.shutdown()
    }

    /// Starts the thread.
    func start() {
        thread.start(name: "longform.speaker.clock") { [self] thread in run(thread) }
    }

    /// Stops the thread and waits for it.
    func stop() {
        thread.stop(waiting: false)
        target.withLock { $0.socket }?.shutdown()
        wake.signal()
        thread.stop(waiting: true)
    }

    /// How often a clock not yet good is warned of (ns).
    static let poorClockWarningInterval: UInt64 = 5_000_000_000

    private func run(_ thread: RouteThread) {
        var generation = 0
        var socket: PosixSocket?
        var outstanding: [UInt32: UInt64] = [:]
        var sequence: UInt32 = 0
        var nextRequest = HostClock.now()
        var targetSince = nextRequest
        var schedule = ClockRequestSchedule(startedAt: targetSince), isRateKnown = false
        /// Replies in a row that matched a request but not this speaker's key.
        var untaggedReplies = 0
        /// When the clock estimate is next logged (once a second, at debug level).
        var nextLog: UInt64 = 0
        /// Replies taken from this target, whether its clock was said to be good, and when a
        /// clock still not good is next warned of: a speaker that waits long for its clock is silent.
        var replies = 0, isGoodReported = false, nextPoorWarning: UInt64 = 0

        /// Takes a datagram that came on the socket: the reply to a request of ours, or nothing.
        func take(_ datagram: PosixSocket.Datagram) {
            // A refused send (nothing on the sender's port yet) surfaces as an error: no datagram.
            // Not an answer to a request of ours: dropped without a word (checked before the tag,
            // so that a flood costs no HMAC, and a forged reply does not use up the real one's slot).
            guard let reply = ClockExchange.decodeReply(datagram.bytes), outstanding[reply.sequence] == reply.t1 else { return }
            guard ClockExchange.isReply(datagram.bytes, taggedWith: key) else {
                // Paired, and not tagged with our secret's key: a forgery, or a sender without the
                // secret (or of a version before tags), which this speaker never synchronises with.
                untaggedReplies += 1
                if untaggedReplies == 50 || untaggedReplies % 3_000 == 0 {
                    logger.warning("speaker: \(untaggedReplies) clock replies in a row not tagged with this speaker's secret; the clock waits for its sender's")
                }
                return
            }
            untaggedReplies = 0
            outstanding.removeValue(forKey: reply.sequence)
            replies += 1
            let state = session.withLock { session in
                (sample: session.receiveClockReply(reply, at: datagram.receivedAt), estimate: session.clock.estimate,
                 rateError: session.clock.rateError, rateCorrection: session.rateCorrection, isGood: session.clock.isGood,
                 isRateKnown: session.clock.isRateKnown)
            }
            if let sample = state.sample { schedule.noteRoundTrip(sample.roundTrip) }
            isRateKnown = state.isRateKnown
            if state.isGood && !isGoodReported {
                isGoodReported = true
                let seconds = Double(datagram.receivedAt &- targetSince) / 1e9
                logger.log(level: seconds < 2 ? .debug : .info, "speaker: clock good after \(String(cFormat: "%.2f", seconds)) s and \(replies) replies, ± \((state.estimate?.uncertainty ?? 0) / 1_000) µs")
            }
            if datagram.receivedAt >= nextLog, let estimate = state.estimate {
                nextLog = datagram.receivedAt + 1_000_000_000
                logger.debug("speaker: clock offset \(estimate.offset) ns at \(estimate.referenceTime) ± \(estimate.uncertainty / 1_000) µs, rate \(String(cFormat: "%+.2f", estimate.skew * 1e6)) ppm (found \(state.rateError.map { String(cFormat: "± %.1f ppm", $0 * 1e6) } ?? "not yet")); output drift correction \(String(cFormat: "%+.1f", state.rateCorrection * 1e6)) ppm, asking every \(schedule.interval(at: datagram.receivedAt, isRateKnown: isRateKnown) / 1_000_000) ms")
            }
        }

        while !thread.shouldStop {
            let (wanted, wantedGeneration, _) = target.withLock { $0 }
            if wantedGeneration != generation {
                generation = wantedGeneration
                outstanding.removeAll()
                nextRequest = HostClock.now()
                targetSince = nextRequest
                (schedule, isRateKnown) = (ClockRequestSchedule(startedAt: targetSince), false)
                socket = nil
                (replies, isGoodReported, nextPoorWarning) = (0, false, targetSince + Self.poorClockWarningInterval)
                if let wanted {
                    do {
                        let opened = try PosixSocket.connectedDatagramSocket(host: wanted.host, port: wanted.port)
                        opened.stampArrivals()
                        opened.setTimeouts(seconds: 0.1)
                        // Published only while its generation is current, so that a change
                        // made meanwhile finds it (and shuts it down) or is seen at the top.
                        let isCurrent = target.withLock { state in
                            guard state.generation == wantedGeneration else { return false }
                            state.socket = opened
                            return true
                        }
                        guard isCurrent else { continue }
                        socket = opened
                    } catch {
                        logger.warning("speaker: cannot ask \(wanted.host):\(wanted.port) for the clock: \(error)")
                    }
                }
            }
            guard let socket else {
                // No sender: nothing to ask until a target or a stop wakes the thread.
                _ = wake.wait(timeout: .now() + 1)
                continue
            }
            let t1 = HostClock.now()
            if !isGoodReported && t1 >= nextPoorWarning, let wanted {
                nextPoorWarning += Self.poorClockWarningInterval
                let estimate = session.withLock { $0.clock.estimate }
                logger.warning("speaker: no good clock yet, \((t1 - targetSince) / 1_000_000_000) s after asking \(wanted.host):\(wanted.port): \(replies) replies, \(estimate.map { "± \($0.uncertainty / 1_000) µs" } ?? "no estimate")")
            }
            if t1 >= nextRequest {
                sequence &+= 1
                outstanding[sequence] = t1
                if outstanding.count > 64, let oldest = outstanding.keys.min() { outstanding.removeValue(forKey: oldest) }
                socket.sendDatagram(ClockExchange.encode(ClockExchange.Request(sequence: sequence, t1: t1), key: key))
                // On the interval's grid (a wait rounded up to the millisecond does not slow the
                // rate), starting afresh after a stall.
                let interval = schedule.interval(at: t1, isRateKnown: isRateKnown)
                nextRequest += interval
                if nextRequest <= t1 { nextRequest = t1 + interval }
            }
            // Takes every reply that has come (the system stamped each as it arrived), then sleeps
            // until the next request: woken once an exchange, not also by its reply (a speaker asks
            // two hundred times a second behind jitter, for its first minute). A change of target
            // or a stop shuts the socket down, which ends the sleep. Rounded up to the millisecond:
            // rounded down, the last fraction of a millisecond before each request was a busy loop
            // of polls, fifty times a second most of what a playing speaker cost.
            while socket.waitUntilReadable(milliseconds: 0), let datagram = socket.receiveDatagram() {
                take(datagram)
            }
            let now = HostClock.now()
            let wait = nextRequest > now ? nextRequest - now : 0
            _ = socket.waitUntilShutDown(milliseconds: Int32((wait + 999_999) / 1_000_000))
        }
    }
}
