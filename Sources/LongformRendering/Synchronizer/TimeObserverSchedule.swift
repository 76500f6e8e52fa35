import LongformCore

/// Which time observers are due as the timeline moves: a value type, so that its rules
/// (each boundary fires exactly once per passage, also when time jumps over it) test without threads.
public struct TimeObserverSchedule: Sendable {
    /// An observer's identity within the schedule.
    public typealias ID = Int

    /// One observer due to fire, at the time that made it due.
    public struct Firing: Sendable, Equatable {
        /// The observer.
        public var id: ID
        /// The boundary crossed, or the current time for a periodic observer.
        public var time: MediaTime

        /// A firing of `id` at `time`.
        public init(id: ID, time: MediaTime) {
            self.id = id
            self.time = time
        }
    }

    /// Boundary times per observer, and whether it has been evaluated since it was added.
    private var boundaries: [ID: (times: [MediaTime], isNew: Bool)] = [:]
    private var periodics: [ID: (interval: MediaTime, lastFired: MediaTime?)] = [:]
    private var nextID: ID = 1
    /// The time of the last evaluation.
    private var lastTime: MediaTime?
    private var lastGeneration: UInt64 = 0
    private var lastRate: Double = 0

    /// An empty schedule.
    public init() {}

    /// Whether any observer is registered.
    public var isEmpty: Bool { boundaries.isEmpty && periodics.isEmpty }

    /// Registers boundary times; they fire when the playhead reaches them from now on
    /// (one exactly at the playhead's position fires at the next evaluation).
    public mutating func addBoundary(times: [MediaTime]) -> ID {
        defer { nextID += 1 }
        boundaries[nextID] = (times.filter(\.isNumeric).sorted(), true)
        return nextID
    }

    /// Registers a periodic observer.
    public mutating func addPeriodic(interval: MediaTime) -> ID {
        defer { nextID += 1 }
        periodics[nextID] = (interval, nil)
        return nextID
    }

    /// Removes an observer; it fires no more.
    public mutating func remove(_ id: ID) {
        boundaries[id] = nil
        periodics[id] = nil
    }

    /// Starts measuring passages from `time` (called when the first observer is added).
    public mutating func reset(to time: MediaTime, generation: UInt64, rate: Double) {
        lastTime = time
        lastGeneration = generation
        lastRate = rate
    }

    /// The observers due now that the timeline reads `time`, in time order. `generation` changes
    /// when the timeline jumps or its rate changes; periodic observers fire then too.
    public mutating func advance(to time: MediaTime, generation: UInt64, rate: Double) -> [Firing] {
        guard time.isNumeric else { return [] }
        let previous = lastTime ?? time
        let jumped = generation != lastGeneration
        let rateChanged = rate != lastRate
        lastTime = time
        lastGeneration = generation
        lastRate = rate

        var firings: [Firing] = []
        for (id, boundary) in boundaries {
            // Passed since the last evaluation; or, for an observer added since, reached exactly.
            for crossing in boundary.times where (crossing > previous || (boundary.isNew && crossing == previous)) && crossing <= time {
                firings.append(Firing(id: id, time: crossing))
            }
        }
        firings.sort { $0.time < $1.time || ($0.time == $1.time && $0.id < $1.id) }
        for id in boundaries.keys { boundaries[id]?.isNew = false }
        for id in periodics.keys.sorted() {
            guard let periodic = periodics[id] else { continue }
            let due: Bool
            if let last = periodic.lastFired {
                due = jumped || rateChanged || time < last || time - last >= periodic.interval
            } else {
                due = true
            }
            if due {
                periodics[id]?.lastFired = time
                firings.append(Firing(id: id, time: time))
            }
        }
        return firings
    }

    /// The earliest timeline time at which an observer will be due, for a timeline now at `now`:
    /// the first boundary not passed at the last evaluation, or a periodic observer's next
    /// interval; at or before `now` when it is due at once. Nil when nothing is registered.
    /// Counted from the last evaluation, not from `now`: a boundary the timeline passed after it
    /// (between an evaluation and this call) is still to fire, and a timer armed by the boundaries
    /// after `now` alone would never fire it (a playlist's end was lost: `longform play` played on).
    public func nextDueTime(at now: MediaTime) -> MediaTime? {
        let evaluated = lastTime ?? now
        // A boundary added exactly at the last evaluation's time is due; otherwise the next one after it.
        let reachedThen = boundaries.values.contains { $0.isNew && $0.times.contains(evaluated) }
        let candidates = [reachedThen ? evaluated : nil, nextBoundary(after: evaluated)]
            + periodics.values.map { periodic -> MediaTime? in periodic.lastFired.map { $0 + periodic.interval } ?? now }
        return candidates.compactMap { $0 }.min()
    }

    /// Whether a boundary added since the last evaluation lies exactly at `time`: it fires at the
    /// next evaluation, so an as-fast-as-possible route must not render past it before that.
    public func hasNewBoundary(at time: MediaTime) -> Bool {
        boundaries.values.contains { $0.isNew && $0.times.contains(time) }
    }

    /// The first boundary strictly after `time` (where an as-fast-as-possible route should pause to fire it).
    public func nextBoundary(after time: MediaTime) -> MediaTime? {
        var next: MediaTime?
        for boundary in boundaries.values {
            if let candidate = boundary.times.first(where: { $0 > time }), next.map({ candidate < $0 }) ?? true {
                next = candidate
            }
        }
        return next
    }
}
