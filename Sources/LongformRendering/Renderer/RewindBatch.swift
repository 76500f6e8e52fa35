/// The renderer's rewind policy as a value type: inside a batch of changes (a seek is a pause, a
/// flush, an enqueue and a start) the rewinds asked of a rewindable route are held and merged into
/// one, from the earliest frame, sent when the outermost batch ends, so that a route that flushes a
/// server stream does it once. A batch that lasts past its deadline (its changes open a slow file
/// or URL) lets what it holds be heard then. The renderer keeps it behind a lock and carries out
/// the rewinds it returns.
struct RewindBatch: Sendable, Equatable {
    /// Batches open now, nested.
    private(set) var depth = 0
    /// The earliest frame a held rewind goes back to.
    private(set) var pendingFrame: Int64?
    /// Which outermost batch is open (or was last): a deadline names the batch it was set for.
    private(set) var generation = 0

    /// A batch begins; returns the batch's generation when it is the outermost, for its deadline.
    mutating func begin() -> Int? {
        depth += 1
        guard depth == 1 else { return nil }
        generation += 1
        return generation
    }

    /// A batch ends; returns the frame to rewind to now when the outermost ends holding one.
    mutating func end() -> Int64? {
        depth -= 1
        guard depth == 0 else { return nil }
        return takePending()
    }

    /// A rewind to `frame` is asked for; returns the frame to rewind to now, or nil when a batch holds it.
    mutating func request(toFrame frame: Int64) -> Int64? {
        guard depth > 0 else { return frame }
        pendingFrame = min(pendingFrame ?? frame, frame)
        return nil
    }

    /// The deadline of batch `batch` passed; returns the frame to rewind to now, if that batch is
    /// still open and holds one (the batch goes on, and holds what comes next).
    mutating func deadlinePassed(ofBatch batch: Int) -> Int64? {
        guard batch == generation, depth > 0 else { return nil }
        return takePending()
    }

    /// Forgets a held rewind: it was for a route that is no longer played to.
    mutating func forgetPending() {
        pendingFrame = nil
    }

    private mutating func takePending() -> Int64? {
        defer { pendingFrame = nil }
        return pendingFrame
    }
}
