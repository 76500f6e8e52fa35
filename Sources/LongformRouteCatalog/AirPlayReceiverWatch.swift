import Logging
import LongformAirPlayDiscovery
import LongformCore
import Synchronization

/// The AirPlay receivers on the network now, as the system's Avahi daemon sees them, kept current
/// on a thread of its own for a long-running server: `onChange` is called with every receiver
/// each time one comes, goes or changes. Without Avahi (not running, or gone) the list is empty,
/// the reason is logged once, and the watch tries again every `retryInterval`.
public final class AirPlayReceiverWatch: Sendable {
    /// How long the watch waits before asking Avahi again after it failed (seconds).
    public static let retryInterval = 5.0

    private struct State {
        var receivers: [AirPlayReceiverRecord] = []
        var isStopped = false
    }

    private let state = Mutex(State())
    private let onChange: @Sendable ([AirPlayReceiverRecord]) -> Void
    private let logger = Logger(label: AirPlayBrowser.logLabel)

    /// Starts watching; `onChange` runs on the watch's thread.
    public init(onChange: @escaping @Sendable ([AirPlayReceiverRecord]) -> Void) {
        self.onChange = onChange
        DetachedThread.start(name: "longform.airplay.watch") { [self] in run() }
    }

    /// The receivers seen last, in the order Avahi merged them (by name).
    public var receivers: [AirPlayReceiverRecord] { state.withLock { $0.receivers } }

    /// The receivers a route can play to: found with an address and an AirPlay 1 port, and not
    /// requiring FairPlay.
    public var playableReceivers: [AirPlayReceiverRecord] { Self.playable(receivers) }

    /// Those of `receivers` a route can play to.
    public static func playable(_ receivers: [AirPlayReceiverRecord]) -> [AirPlayReceiverRecord] {
        receivers.filter { $0.preferredAddress != nil && $0.raopPort != nil && !$0.requiresFairPlay }
    }

    /// Ends the watch within a quarter of a second; no change is reported after it, but for one under way.
    public func stop() { state.withLock { $0.isStopped = true } }

    private var isStopped: Bool { state.withLock { $0.isStopped } }

    private func update(_ receivers: [AirPlayReceiverRecord]) {
        let changed = state.withLock { state in
            defer { state.receivers = receivers }
            return state.receivers != receivers && !state.isStopped
        }
        if changed { onChange(receivers) }
    }

    private func run() {
        var lastFailure: String?
        while !isStopped {
            do {
                let browser = try AirPlayBrowser(logger: logger)
                if lastFailure != nil { logger.info("AirPlay discovery: Avahi answers again") }
                lastFailure = nil
                try browser.watch(while: { !isStopped }) { update($0) }
            } catch {
                let reason = "\(error)"
                if reason != lastFailure { logger.warning("AirPlay discovery: \(reason); receivers are not listed until it answers") }
                lastFailure = reason
                update([])
                let deadline = HostClock.now() + UInt64(Self.retryInterval * 1e9)
                while !isStopped && HostClock.now() < deadline { HostClock.sleep(untilNanoseconds: min(deadline, HostClock.now() + 250_000_000)) }
            }
        }
    }
}
