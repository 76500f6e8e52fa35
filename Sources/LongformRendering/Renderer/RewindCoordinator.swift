import Dispatch
import LongformCore
import Synchronization

/// The renderer's rewinds of a rewindable route that drives its timeline: from which frame the
/// route renders again for a change (`frameToRenderAgain`), and one rewind, not several, for a
/// change made of several (`RewindBatch`), carried out on the route. Thread-safe.
final class RewindCoordinator: Sendable {
    private let batch = Mutex(RewindBatch())
    /// How long a batch may hold a rewind back (seconds).
    let batchDeadline: Double

    /// A coordinator whose batches hold a rewind back for `batchDeadline` seconds at most (its
    /// changes may open a slow file or URL; 10 ms by default).
    init(batchDeadline: Double = 0.01) {
        self.batchDeadline = batchDeadline
    }

    /// The route frame from which a route renders again so that audio at media `time` is heard
    /// where it belongs: the earliest frame it can still change, or later, when the timeline there
    /// (`timeline`, the segment at that frame and the next change's tick) runs at rate 1 up to
    /// `time` without a change in between. Nil when the timeline stands still with no change
    /// ahead: what the route holds is silence that no audio changes.
    static func frameToRenderAgain(forMediaTime time: MediaTime, earliestChangeableFrame earliest: Int64,
                                   timeline: (segment: TimelineSegment, nextChangeTick: Int64?), sampleRate: Int) -> Int64? {
        let (segment, nextChange) = timeline
        if segment.rate == 0 && nextChange == nil { return nil }
        guard segment.rate == 1 else { return earliest }
        let offset = (time - segment.time(atTick: earliest, ticksPerSecond: Int64(sampleRate)))
            .convertScale(Int32(sampleRate), method: .roundTowardNegativeInfinity).value
        return offset > 0 && nextChange.map({ earliest + offset < $0 }) ?? true ? earliest + offset : earliest
    }

    /// Has `route` render again from `frame`: now, or when the open batch ends.
    func rewind(_ route: any RewindableRoute, toFrame frame: Int64) {
        if let frame = batch.withLock({ $0.request(toFrame: frame) }) { route.rewind(toFrame: frame) }
    }

    /// Runs `changes` as one batch: the rewinds they ask for are merged into one, from the
    /// earliest frame, carried out on `route()` when the outermost batch ends, or when it has held
    /// them for `batchDeadline` (what it asked for so far is heard then).
    func batching<Result>(route: @escaping @Sendable () -> (any RewindableRoute)?, _ changes: () throws -> Result) rethrows -> Result {
        if let started = batch.withLock({ $0.begin() }) {
            DispatchQueue.global().asyncAfter(deadline: .now() + batchDeadline) { [weak self] in
                if let frame = self?.batch.withLock({ $0.deadlinePassed(ofBatch: started) }), let route = route() { route.rewind(toFrame: frame) }
            }
        }
        defer {
            if let frame = batch.withLock({ $0.end() }), let route = route() { route.rewind(toFrame: frame) }
        }
        return try changes()
    }

    /// Forgets a rewind held back: it was for a route that is no longer played to.
    func forgetPending() {
        batch.withLock { $0.forgetPending() }
    }
}
