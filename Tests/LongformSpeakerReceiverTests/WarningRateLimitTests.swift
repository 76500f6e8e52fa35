@testable import LongformSpeakerReceiver
import Testing

/// The speaker's limit on warnings about connections: a few lines per window, then a count of
/// the rest once the window ends.
@Suite struct WarningRateLimitTests {
    static let second: UInt64 = 1_000_000_000

    @Test func theFirstLinesOfAWindowAreWrittenTheRestCountedAndReportedOnce() {
        var limit = WarningRateLimit(maximumLines: 3, window: 10 * Self.second)
        let decisions = (0..<10).map { limit.warning(at: UInt64($0) * Self.second / 10) }
        #expect(decisions.map(\.write) == [true, true, true] + Array(repeating: false, count: 7))
        #expect(decisions.allSatisfy { $0.suppressedBefore == 0 })
        // Not before the window ends; then once.
        #expect(limit.endedWindowSuppressions(at: 10 * Self.second - 1) == nil)
        #expect(limit.endedWindowSuppressions(at: 10 * Self.second) == 7)
        #expect(limit.endedWindowSuppressions(at: 11 * Self.second) == nil)
        // A new window opens with the next warning.
        #expect(limit.warning(at: 30 * Self.second) == .init(write: true, suppressedBefore: 0))
    }

    @Test func theNextWarningAfterTheWindowReportsTheCountFirst() {
        var limit = WarningRateLimit(maximumLines: 1, window: 10 * Self.second)
        #expect(limit.warning(at: 0) == .init(write: true, suppressedBefore: 0))
        #expect(limit.warning(at: 1) == .init(write: false, suppressedBefore: 0))
        #expect(limit.warning(at: 2) == .init(write: false, suppressedBefore: 0))
        #expect(limit.warning(at: 10 * Self.second) == .init(write: true, suppressedBefore: 2))
        #expect(limit.warning(at: 11 * Self.second) == .init(write: false, suppressedBefore: 0))
        // At shutdown: what the open window suppressed.
        #expect(limit.takeSuppressed() == 1)
        #expect(limit.takeSuppressed() == nil)
    }

    /// A flood of 1,000 warnings a second for four minutes costs at most the limit plus one line a window.
    @Test func aFloodWritesABoundedNumberOfLines() {
        var limit = WarningRateLimit()
        var lines = 0
        var written = 0
        var suppressed = 0
        let millisecond: UInt64 = 1_000_000
        for index in 0..<240_000 {
            let now = UInt64(index) * millisecond
            let decision = limit.warning(at: now)
            if decision.suppressedBefore > 0 { lines += 1; suppressed += decision.suppressedBefore }
            if decision.write { lines += 1; written += 1 }
            if index % 1_000 == 0, let count = limit.endedWindowSuppressions(at: now) { lines += 1; suppressed += count }
        }
        if let count = limit.takeSuppressed() { lines += 1; suppressed += count }
        #expect(lines <= 4 * (WarningRateLimit.standardMaximumLines + 1), "\(lines) lines")
        #expect(written + suppressed == 240_000, "every warning written or counted")
    }
}
