@testable import LongformSpeakerReceiver
import Testing

/// When a speaker's connection reads: a fill over a slow link, far ahead, a hundred times a second;
/// anything else as bytes come.
@Suite struct ReadPacingTests {
    static let millisecond: UInt64 = 1_000_000

    /// Feeds `pacing` a second of a link that brings `bytesPerSecond` in segments of
    /// `segmentBytes`, read as they come unless it says to wait (then all that came meanwhile in
    /// one read when the wait ends); returns how many reads there were and the longest a segment
    /// waited to be read (ns).
    static func readsOverASecond(_ pacing: inout ReadPacing, bytesPerSecond: Double, segmentBytes: Int, isFarAhead: Bool = true) -> (reads: Int, longestWait: UInt64) {
        let segmentInterval = UInt64(Double(segmentBytes) / bytesPerSecond * 1e9)
        let start: UInt64 = 1_000 * millisecond, end = start + 1_000 * millisecond
        var now = start, nextSegment = start
        var waitEnds: UInt64?, oldestPending: UInt64?, pending = 0, reads = 0, longestWait: UInt64 = 0
        while min(nextSegment, waitEnds ?? .max) < end {
            if let ends = waitEnds, ends <= nextSegment {
                now = ends
                pacing.waitEnded(at: now)
                waitEnds = nil
            } else {
                now = nextSegment
                pending += segmentBytes
                oldestPending = oldestPending ?? now
                nextSegment += segmentInterval
            }
            guard waitEnds == nil, let oldest = oldestPending else { continue }
            pacing.received(byteCount: pending)
            (reads, longestWait, pending, oldestPending) = (reads + 1, max(longestWait, now - oldest), 0, nil)
            if case .wait = pacing.readEnded(at: now, isFarAhead: { isFarAhead }) { waitEnds = now + ReadPacing.interval }
        }
        return (reads, longestWait)
    }

    @Test func aFillOverFiftyMegabitsFarAheadIsReadAHundredTimesASecond() {
        var pacing = ReadPacing()
        let (reads, longestWait) = Self.readsOverASecond(&pacing, bytesPerSecond: 6_250_000, segmentBytes: 10_000)
        // 625 segments a second; paced, one read per 10 ms wait and the one that starts it, and
        // no segment (a control message among them) waits longer than a wait.
        #expect(reads >= 90 && reads <= 105, "\(reads) reads")
        #expect(longestWait <= ReadPacing.interval, "a segment waited \(longestWait) ns")
    }

    @Test func aFillOverLoopbackIsReadAsItComes() {
        var pacing = ReadPacing()
        // 64 KB every 0.2 ms: 320 MB/s, far above the rate limit.
        let (reads, _) = Self.readsOverASecond(&pacing, bytesPerSecond: 320_000_000, segmentBytes: 64_000)
        #expect(reads == 5_000, "\(reads) reads")
    }

    @Test func aSpeakerToppingUpOrNotFarAheadIsNeverPaced() {
        var toppingUp = ReadPacing()
        // A block of 6 KB a tenth of a second: no read is soon after another.
        #expect(Self.readsOverASecond(&toppingUp, bytesPerSecond: 60_000, segmentBytes: 6_000).reads == 10)
        var short = ReadPacing()
        #expect(Self.readsOverASecond(&short, bytesPerSecond: 6_250_000, segmentBytes: 10_000, isFarAhead: false).reads == 625)
    }

    @Test func aWaitIsAnnouncedOnlyWhenNoneEndedInTheLastSecond() {
        var pacing = ReadPacing()
        let start: UInt64 = 5_000 * Self.millisecond
        var actions: [ReadPacing.Action] = [], waitEnds: UInt64?
        for time in [0, 2, 14, 2_000, 2_001].map({ start + $0 * Self.millisecond }) {
            if let ends = waitEnds, ends <= time { pacing.waitEnded(at: ends) }
            pacing.received(byteCount: 10_000)
            let action = pacing.readEnded(at: time) { true }
            if case .wait = action { waitEnds = time + ReadPacing.interval }
            actions.append(action)
        }
        // The first read is not soon after another; the second starts a wait; the third comes
        // right after that wait ends; the fourth is alone; the fifth starts a wait 2 s after the
        // last ended.
        #expect(actions == [.readOn, .wait(isFirstInAWhile: true), .wait(isFirstInAWhile: false), .readOn, .wait(isFirstInAWhile: true)])
    }
}
