import Synchronization

/// Ends a source's network reads from another thread: the opening under way, a read waiting on a
/// stalled server, and every later one (they end as though the input had, "cancelled"). One token
/// may serve several sources (a reader's connection and the ones it makes after a stall).
public final class ReadCancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    /// A token not cancelled yet.
    public init() {}

    /// Cancels, at once and for good (safe from any thread).
    public func cancel() { flag.store(true, ordering: .relaxed) }

    /// Whether `cancel()` was called.
    public var isCancelled: Bool { flag.load(ordering: .relaxed) }
}
