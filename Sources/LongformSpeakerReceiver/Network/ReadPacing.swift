/// When a speaker's connection reads: as soon as bytes come, or, while a fill streams in over a
/// slow link and the buffer is far ahead of what plays, `interval` after its last read.
///
/// Over 50 Mbit/s a fill comes as 10 KB segments every 1.7 ms, and a speaker that read each was
/// woken 600 times a second for minutes of audio it would not play for minutes. Paced, it reads a
/// hundred times a second; a control message then waits at most `interval` more, and the sender's
/// audio in flight (`SpeakerFeed.inFlightSeconds`) still fills such a link. A fill faster than
/// `rateLimit` (loopback) brings more than an interval's worth to each read and is not paced, nor
/// is a speaker topping up (a block a tenth of a second) or one whose buffer is short (a start, a
/// seek's refill). A value type fed with the reads' bytes and ends and the waits' ends, whose
/// answers the connection carries out: tested without sockets.
struct ReadPacing: Sendable {
    /// The wait after a read while paced (ns).
    static let interval: UInt64 = 10_000_000
    /// Reads are paced only while the bytes come slower than this (bytes a second: 100 Mbit/s).
    static let rateLimit = 12_500_000.0
    /// How far ahead of what plays the buffer must reach before reads are paced (seconds): far
    /// more than a paced read's wait, and reached only by a fill.
    static let leadSeconds: Int64 = 10

    /// What the connection does after a read.
    enum Action: Equatable {
        /// Reads on as bytes come.
        case readOn
        /// Stops reading for `interval`, then calls `waitEnded(at:)`; `isFirstInAWhile` when no
        /// wait ended in the last second (a new fill: worth a line in the log).
        case wait(isFirstInAWhile: Bool)
    }

    /// Whether reading waits now.
    private(set) var isWaiting = false
    /// When the last read ended, and when the last wait did (ns).
    private var lastReadEnded: UInt64?
    private var lastWaitEnded: UInt64?
    /// Bytes read since the last read ended.
    private var bytesInRead = 0

    /// Counts `byteCount` bytes just read.
    mutating func received(byteCount: Int) {
        bytesInRead += byteCount
    }

    /// A read ended at `now` (ns); `isFarAhead` says whether the buffer holds `leadSeconds` beyond
    /// what plays (asked last: it takes the session's lock).
    mutating func readEnded(at now: UInt64, isFarAhead: () -> Bool) -> Action {
        let bytes = bytesInRead, last = lastReadEnded
        (lastReadEnded, bytesInRead) = (now, 0)
        // Streaming: soon after the last read, or right after a wait with audio waiting.
        let isRecent = { (time: UInt64?) in time.map { now &- $0 < Self.interval } ?? false }
        guard isRecent(last) || isRecent(lastWaitEnded), let last, now > last,
              Double(bytes) < Self.rateLimit * Double(now - last) / 1e9, isFarAhead() else { return .readOn }
        isWaiting = true
        return .wait(isFirstInAWhile: lastWaitEnded.map { now &- $0 > 1_000_000_000 } ?? true)
    }

    /// The wait ended at `now` (ns): reading goes on.
    mutating func waitEnded(at now: UInt64) {
        isWaiting = false
        lastWaitEnded = now
    }
}
