import CAvahi
import Logging

/// Finds AirPlay receivers on the local network: browses `_raop._tcp` and `_airplay._tcp` on every
/// interface through the system's Avahi daemon (over D-Bus), resolves each instance and merges
/// each device's services into an `AirPlayReceiverRecord`.
///
/// Invariant: owns its Avahi poll loop and client, freed in deinit (the client first); every
/// browse runs on the calling thread, inside one call, so one browser is used from one thread at a time.
public final class AirPlayBrowser {
    /// The swift-log label of discovery's messages.
    public static let logLabel = "longform.route.airplay.discovery"

    private let poll: OpaquePointer
    private let client: OpaquePointer
    private let logger: Logger

    /// Connects to the Avahi daemon; throws `AirPlayDiscoveryError` ("Avahi: Daemon not running") if it cannot.
    public init(logger: Logger = Logger(label: AirPlayBrowser.logLabel)) throws {
        self.logger = logger
        guard let poll = avahi_simple_poll_new() else { throw AirPlayDiscoveryError(operation: "making a poll loop", reason: "out of memory") }
        var error: Int32 = 0
        // No AVAHI_CLIENT_NO_FAIL: a daemon that is not running is an answer now, not a wait.
        guard let client = avahi_client_new(avahi_simple_poll_get(poll), AvahiClientFlags(0), nil, nil, &error) else {
            avahi_simple_poll_free(poll)
            throw AirPlayDiscoveryError(reason: String(cString: avahi_strerror(error)))
        }
        self.poll = poll
        self.client = client
    }

    deinit {
        avahi_client_free(client)
        avahi_simple_poll_free(poll)
    }

    /// The receivers found within `seconds`: returns once every browser has said "all for now" and
    /// every instance is resolved (a second or so on a quiet network), or when the time is up.
    public func browse(for seconds: Double) throws -> [AirPlayReceiverRecord] {
        let session = try AvahiBrowseSession(client: client, logger: logger)
        try run(until: .now + .milliseconds(Int64(max(0, seconds) * 1000))) { session.isSettled }
        if session.hasFailedEntirely, let failure = session.failure { throw failure }
        return AirPlayReceiverRecord.merging(session.instances)
    }

    /// The receiver named `name` (its user-facing name, any case), as soon as it is resolved; nil if none is within `timeout` seconds.
    public func find(name: String, timeout: Double) throws -> AirPlayReceiverRecord? {
        let session = try AvahiBrowseSession(client: client, logger: logger)
        let wanted = name.lowercased()
        var found: AirPlayReceiverRecord?
        try run(until: .now + .milliseconds(Int64(max(0, timeout) * 1000))) {
            found = AirPlayReceiverRecord.merging(session.instances).first { $0.name.lowercased() == wanted }
            return found != nil || session.hasFailedEntirely
        }
        if found == nil, session.hasFailedEntirely, let failure = session.failure { throw failure }
        return found
    }

    /// Browses until `keepGoing` says no (asked at least every 0.25 s), calling `onChange` with every
    /// receiver on the network each time the set changes (one appeared, went away or changed);
    /// throws when a browser fails or the daemon goes away.
    public func watch(while keepGoing: () -> Bool, onChange: ([AirPlayReceiverRecord]) -> Void) throws {
        let session = try AvahiBrowseSession(client: client, logger: logger)
        var last: [AirPlayReceiverRecord] = []
        while keepGoing() {
            try run(until: .now + .milliseconds(250)) { false }
            if let failure = session.failure { throw failure }
            let records = AirPlayReceiverRecord.merging(session.instances)
            if records != last {
                last = records
                onChange(records)
            }
        }
    }

    /// Runs the poll loop (the session's callbacks) until `isDone` or `deadline`.
    private func run(until deadline: ContinuousClock.Instant, isDone: () -> Bool) throws {
        while !isDone() {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return }
            let (seconds, attoseconds) = remaining.components
            // At least 1 ms (0 would spin), at most the time left.
            let milliseconds = Int32(clamping: max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000))
            let result = avahi_simple_poll_iterate(poll, milliseconds)
            guard result == 0 else {
                throw AirPlayDiscoveryError(operation: "running the poll loop", reason: result < 0 ? "poll failed" : "the loop was told to quit")
            }
            // The daemon gone (or the bus): the browsers say nothing more, so the client's state is the news.
            if avahi_client_get_state(client) == AVAHI_CLIENT_FAILURE {
                throw AirPlayDiscoveryError(operation: "browsing", reason: String(cString: avahi_strerror(avahi_client_errno(client))))
            }
        }
    }
}
