/// At most `maximumLines` warnings written per `window`; the rest are counted, and their count is
/// reported once that window has ended (with the next warning, or when asked). Windows start at
/// the first warning after the previous one ended. A stranger's connections then cost the log a
/// few lines a minute however many it opens. Times are nanoseconds on one clock that never goes
/// back; no clock or thread of its own.
struct WarningRateLimit: Sendable {
    /// Warnings written per window before the rest are only counted.
    static var standardMaximumLines: Int { 10 }
    /// The window's length: a minute.
    static var standardWindow: UInt64 { 60_000_000_000 }

    /// What to write for one warning.
    struct Decision: Sendable, Equatable {
        /// Whether to write the warning.
        var write: Bool
        /// Warnings suppressed in a window that has ended, to report before it (0: none).
        var suppressedBefore: Int
    }

    /// Lines written per window at most.
    let maximumLines: Int
    /// The window's length in nanoseconds.
    let window: UInt64
    /// When the current window started; nil when none is open.
    private var windowStart: UInt64?
    /// Warnings written in the current window.
    private var written = 0
    /// Warnings suppressed in the current window.
    private(set) var suppressed = 0

    /// A limit with no warning seen.
    init(maximumLines: Int = Self.standardMaximumLines, window: UInt64 = Self.standardWindow) {
        self.maximumLines = max(maximumLines, 0)
        self.window = window
    }

    /// A warning at `now`: whether to write it, and a count to report first.
    mutating func warning(at now: UInt64) -> Decision {
        let ended = endedWindowSuppressions(at: now) ?? 0
        if windowStart == nil { windowStart = now }
        guard written < maximumLines else {
            suppressed += 1
            return Decision(write: false, suppressedBefore: ended)
        }
        written += 1
        return Decision(write: true, suppressedBefore: ended)
    }

    /// The warnings suppressed in the window if it has ended by `now`, once (the window is then
    /// over: the next warning opens another); nil when there is nothing to report.
    mutating func endedWindowSuppressions(at now: UInt64) -> Int? {
        guard let start = windowStart, now >= start &+ window else { return nil }
        windowStart = nil
        written = 0
        return takeSuppressed()
    }

    /// The warnings suppressed so far in the current window, once, ended or not (the window goes
    /// on); nil when none. For a last report at shutdown.
    mutating func takeSuppressed() -> Int? {
        defer { suppressed = 0 }
        return suppressed > 0 ? suppressed : nil
    }
}
