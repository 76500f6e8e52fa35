/// Why discovery could not run or went wrong: what failed, in Avahi's words ("Avahi: Daemon not running").
public struct AirPlayDiscoveryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done when it failed ("browsing _raop._tcp"); nil for connecting to the daemon.
    public var operation: String?
    /// Avahi's reason (`avahi_strerror`): "Daemon not running", "Access denied".
    public var reason: String

    /// An error of `reason` while doing `operation`.
    public init(operation: String? = nil, reason: String) {
        self.operation = operation
        self.reason = reason
    }

    /// "Avahi: REASON" or "Avahi: OPERATION: REASON".
    public var description: String { operation.map { "Avahi: \($0): \(reason)" } ?? "Avahi: \(reason)" }
}
