/// When a speaker link tries again, and when it says so. After 0.1 s, doubling up to 1 s while
/// connections fail or end; back to 0.1 s once a welcomed connection has lasted 5 s, so that a
/// speaker that welcomes and closes at once (it refuses the stream) is not asked ten times a
/// second. A failure is logged the first time and every 60th after, not at every attempt.
struct ReconnectPolicy: Equatable {
    /// The first delay, and the one after a settled connection (seconds).
    static let initialDelay = 0.1
    /// The longest delay (seconds).
    static let maximumDelay = 1.0
    /// How long a welcomed connection must last to count as settled (seconds).
    static let settledConnection = 5.0

    /// The delay before the next attempt.
    private(set) var delay = initialDelay
    /// Attempts failed (before a welcome) since the last settled connection.
    private(set) var failures = 0

    /// An attempt failed before the speaker said welcome; returns whether to log it.
    mutating func attemptFailed() -> Bool {
        failures += 1
        return failures == 1 || failures % 60 == 0
    }

    /// A connection ended (or never was) after `seconds`; returns the delay before the next attempt.
    mutating func connectionEnded(wasWelcomed: Bool, lastedSeconds seconds: Double) -> Double {
        if wasWelcomed && seconds > Self.settledConnection { self = ReconnectPolicy() }
        defer { delay = min(delay * 2, Self.maximumDelay) }
        return delay
    }
}
