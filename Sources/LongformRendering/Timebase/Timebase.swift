import LongformCore
import Synchronization

/// One piece of a timeline: from `effectiveTick` on, media time = `time + rate × (tick − anchorTick) / ticksPerSecond`.
public struct TimelineSegment: Sendable, Equatable {
    /// Playback rate (0 stopped, 1 natural).
    public var rate: Double
    /// Media time at `anchorTick`.
    public var time: MediaTime
    /// The clock tick at which the media time is `time`.
    public var anchorTick: Int64
    /// The first tick this segment governs; earlier ticks belong to the segment before it.
    public var effectiveTick: Int64
    /// Whether it goes on from the time the segment before it reached (a rate change "from where
    /// the timeline is"), rather than from a time it was given.
    public var isContinuous = false

    /// Media time at `tick` on a clock of `ticksPerSecond`.
    public func time(atTick tick: Int64, ticksPerSecond: Int64) -> MediaTime {
        if rate == 0 { return time }
        let elapsed = tick - anchorTick
        if rate == 1 {
            // Exact: a rational number of ticks.
            guard ticksPerSecond <= Int64(Int32.max) else { return time + MediaTime(seconds: Double(elapsed) / Double(ticksPerSecond), preferredTimescale: 1_000_000_000) }
            return time + MediaTime(value: elapsed, timescale: Int32(ticksPerSecond))
        }
        return time + MediaTime(seconds: rate * Double(elapsed) / Double(ticksPerSecond), preferredTimescale: 1_000_000_000)
    }
}

/// The media timeline of a synchronizer: a rate and a time, anchored to a clock (a route's or the host's).
/// A change applies from the earliest tick the clock can still change, so that the time it reports is
/// the time of what is heard.
public final class Timebase: Sendable {
    private struct State {
        var clock: any TimebaseClock
        /// In order of effective tick; the first governs every tick before the second. Segments are
        /// kept until the clock has passed them, so that changes not yet heard all count.
        var segments: [TimelineSegment]
        /// Counts changes, so that readers can tell a jump from steady running.
        var generation: UInt64 = 0
        /// The end of the ticks a renderer is rendering now: a change cannot apply before it.
        var renderClaim: Int64 = .min
        /// On a rewindable clock, the segment each stretch of ticks not yet heard was last rendered
        /// with, in tick order without overlaps: a change may replace a segment the route already
        /// rendered, and a route that then resumes late has played that segment, not the one before it.
        var renderedSpans: [(ticks: Range<Int64>, segment: TimelineSegment)] = []
    }
    private let state: Mutex<State>

    /// A stopped timebase at time zero on `clock`.
    public init(clock: any TimebaseClock = HostTimebaseClock()) {
        let start = clock.currentTick()
        let segment = TimelineSegment(rate: 0, time: .zero, anchorTick: start, effectiveTick: start)
        state = Mutex(State(clock: clock, segments: [segment]))
    }

    /// The clock it runs on.
    public var clock: any TimebaseClock { state.withLock { $0.clock } }

    /// The rate last set (read-after-write consistent).
    public var rate: Double { state.withLock { $0.segments[$0.segments.count - 1].rate } }

    /// Increases with every rate, time or clock change.
    public var generation: UInt64 { state.withLock { $0.generation } }

    /// The media time now.
    public func currentTime() -> MediaTime {
        state.withLock { state in
            let tick = state.clock.currentTick()
            return Self.segment(in: state, forTick: tick).time(atTick: tick, ticksPerSecond: state.clock.ticksPerSecond)
        }
    }

    /// Whether the last change is heard already: until then `currentTime()` still follows what
    /// the route plays from before it (a seek is not heard before the audio queued ahead of it).
    public var isLatestChangeHeard: Bool {
        state.withLock { state in
            Self.governingIndex(in: state.segments, tick: state.clock.currentTick()) == state.segments.count - 1
        }
    }

    /// The media time at host time `hostTime` nanoseconds, by the current anchors.
    public func time(atHostTime hostTime: UInt64) -> MediaTime {
        state.withLock { state in
            let tick = state.clock.tick(atHostTime: hostTime)
            return Self.segment(in: state, forTick: tick).time(atTick: tick, ticksPerSecond: state.clock.ticksPerSecond)
        }
    }

    /// The segment that governs `tick`, and the tick where the next one takes over (if later).
    public func segment(forTick tick: Int64) -> (segment: TimelineSegment, nextChangeTick: Int64?) {
        state.withLock { Self.lookup(in: $0, tick: tick) }
    }

    /// The earliest media time the timeline reads at `tick` or any later tick: where a jump back
    /// (a restart, a seek to an earlier time) lies ahead, the time it jumps back to.
    public func earliestTime(fromTick tick: Int64) -> MediaTime {
        state.withLock { state in
            let ticksPerSecond = state.clock.ticksPerSecond
            let first = Self.governingIndex(in: state.segments, tick: tick)
            var earliest = state.segments[first].time(atTick: tick, ticksPerSecond: ticksPerSecond)
            for segment in state.segments[(first + 1)...] where segment.time.isNumeric {
                earliest = min(earliest, segment.time(atTick: segment.effectiveTick, ticksPerSecond: ticksPerSecond))
            }
            return earliest
        }
    }

    /// The segment for rendering ticks `tick..<tick + count`, claiming them: until `releaseRenderClaim`,
    /// a rate or time change applies only after them, so that none of them is rendered by the old
    /// segment while the new one says otherwise.
    public func segmentForRendering(fromTick tick: Int64, count: Int) -> (segment: TimelineSegment, nextChangeTick: Int64?) {
        state.withLock { state in
            state.renderClaim = max(state.renderClaim, tick + Int64(count))
            let found = Self.lookup(in: state, tick: tick)
            if state.clock.isRewindable { Self.noteRendered(tick..<min(tick + Int64(count), found.nextChangeTick ?? .max), with: found.segment, in: &state) }
            return found
        }
    }

    /// Notes that `ticks` are rendered with `segment`. A render replaces what was rendered from its
    /// start on (a route renders in order, and again from a rewind), so the spans stay in tick
    /// order without overlaps: one per segment rendered in a row, none the clock has passed.
    private static func noteRendered(_ ticks: Range<Int64>, with segment: TimelineSegment, in state: inout State) {
        guard !ticks.isEmpty else { return }
        let heard = state.clock.currentTick()
        state.renderedSpans.removeAll { $0.ticks.upperBound <= heard || $0.ticks.lowerBound >= ticks.lowerBound }
        if let last = state.renderedSpans.last, last.ticks.upperBound > ticks.lowerBound {
            state.renderedSpans[state.renderedSpans.count - 1].ticks = last.ticks.lowerBound..<ticks.lowerBound
        }
        if let last = state.renderedSpans.last, last.ticks.upperBound == ticks.lowerBound, last.segment == segment {
            state.renderedSpans[state.renderedSpans.count - 1].ticks = last.ticks.lowerBound..<ticks.upperBound
        } else {
            state.renderedSpans.append((ticks, segment))
        }
    }

    /// The segment `tick` was last rendered with, if it is still noted.
    private static func renderedSegment(in state: State, tick: Int64) -> TimelineSegment? {
        state.renderedSpans.last { $0.ticks.contains(tick) }?.segment
    }

    /// The end of the ticks claimed for rendering (`Int64.min` when none).
    public var renderClaim: Int64 { state.withLock { $0.renderClaim } }

    /// Ends a claim: ticks from `tick` on were not rendered after all and may still change.
    /// A change that waited for the claim now applies from `tick`: an as-fast-as-possible route
    /// that rendered nothing (the timeline stood still) would otherwise never reach it.
    public func releaseRenderClaim(downTo tick: Int64) {
        state.withLock { state in
            let claim = state.renderClaim
            state.renderClaim = tick
            let earliest = max(tick, state.clock.earliestChangeableTick())
            var moved = false
            for index in state.segments.indices.dropFirst() where state.segments[index].effectiveTick > earliest && state.segments[index].effectiveTick <= claim {
                let placed = state.segments[index].effectiveTick
                let floor = max(earliest, state.segments[index - 1].effectiveTick)
                state.segments[index].effectiveTick = floor
                // "As soon as it can be heard" was anchored at the tick it applied from; it moves with it.
                if state.segments[index].anchorTick == placed { state.segments[index].anchorTick = floor }
                moved = true
            }
            if moved { state.generation &+= 1 }
        }
    }

    private static func lookup(in state: State, tick: Int64) -> (segment: TimelineSegment, nextChangeTick: Int64?) {
        let index = governingIndex(in: state.segments, tick: tick)
        let next = index + 1 < state.segments.count ? state.segments[index + 1].effectiveTick : nil
        return (state.segments[index], next)
    }

    /// The index of the segment that governs `tick`.
    private static func governingIndex(in segments: [TimelineSegment], tick: Int64) -> Int {
        var index = 0
        while index + 1 < segments.count && segments[index + 1].effectiveTick <= tick { index += 1 }
        return index
    }

    /// Sets rate and time together. `time` `.invalid` keeps the timeline continuous; `hostTime` nil
    /// means "as soon as it can be heard". Returns the time and rate before the change, and the
    /// tick it applies from (on a rewindable clock, possibly a tick already rendered).
    @discardableResult
    public func setRate(_ rate: Double, time: MediaTime, atHostTime hostTime: UInt64?) -> (time: MediaTime, rate: Double, effectiveTick: Int64) {
        state.withLock { state in
            let tps = state.clock.ticksPerSecond
            // A claim only holds a change back when the claimed ticks cannot be rendered again.
            let effective = state.clock.isRewindable ? state.clock.earliestChangeableTick() : max(state.clock.earliestChangeableTick(), state.renderClaim)
            let heard = state.clock.currentTick()
            // Segments that would only start at or after the new change were never rendered: replaced.
            while state.segments.count > 1 && state.segments[state.segments.count - 1].effectiveTick >= effective { state.segments.removeLast() }
            let old = Self.lookup(in: state, tick: effective).segment
            let anchor = hostTime.map { state.clock.tick(atHostTime: $0) } ?? effective
            let anchoredTime = time.isValid ? time : old.time(atTick: anchor, ticksPerSecond: tps)
            let previousTime = old.time(atTick: effective, ticksPerSecond: tps)
            let heardIndex = Self.governingIndex(in: state.segments, tick: heard)
            if time.isValid && state.segments[heardIndex].rate == 0 && heardIndex == state.segments.count - 1 {
                // A stopped timeline jumps at once to the new time and waits there until the audio starts.
                let stopped = state.segments[heardIndex]
                state.segments[heardIndex] = TimelineSegment(rate: 0, time: time, anchorTick: effective, effectiveTick: stopped.effectiveTick)
            }
            state.segments.append(TimelineSegment(rate: rate, time: anchoredTime, anchorTick: anchor, effectiveTick: max(effective, state.segments[state.segments.count - 1].effectiveTick),
                                                  isContinuous: !time.isValid && hostTime == nil))
            // Segments the clock has left behind are dropped.
            let governing = Self.governingIndex(in: state.segments, tick: heard)
            if governing > 0 { state.segments.removeFirst(governing) }
            state.generation &+= 1
            return (previousTime, old.rate, effective)
        }
    }

    /// A rewindable route resumed at `resumeTick` after a rewind to `targetTick` (its thread came
    /// late, or its device could not take back that much): the ticks before `resumeTick` played
    /// what was rendered for them. Changes placed in between move to `resumeTick`; one that went
    /// on from where the timeline was goes on from the time heard there (the segment the tick
    /// before was rendered with, which a later change may have replaced since), so nothing heard
    /// is repeated or skipped on the timeline. A change the route had already rendered up to
    /// `resumeTick` (the rewind was for its audio, which came late) was heard: it stays.
    public func routeResumed(atTick resumeTick: Int64, afterRewindTo targetTick: Int64) {
        state.withLock { state in
            // The tick before the resume played what the timeline says it plays: the timeline is
            // already the truth there, and the resume goes on from it.
            if let heard = Self.renderedSegment(in: state, tick: resumeTick - 1), heard == Self.segment(in: state, forTick: resumeTick - 1) { return }
            // A change the clock has already passed is the first segment, and the one before it is
            // gone: the one its ticks up to `resumeTick` were rendered with goes before it again.
            if let first = state.segments.first, first.effectiveTick >= targetTick && first.effectiveTick < resumeTick,
               let before = Self.renderedSegment(in: state, tick: resumeTick - 1), before != first, before.effectiveTick < first.effectiveTick {
                state.segments.insert(before, at: 0)
            }
            var lastMoved: Int?
            for index in state.segments.indices.dropFirst() where state.segments[index].effectiveTick >= targetTick && state.segments[index].effectiveTick < resumeTick {
                let moved = lastMoved != nil
                var segment = state.segments[index]
                if segment.anchorTick == segment.effectiveTick {
                    if segment.isContinuous {
                        // After a change moved here too, its time; else the time heard just before.
                        let before = moved ? state.segments[index - 1] : Self.renderedSegment(in: state, tick: resumeTick - 1) ?? state.segments[index - 1]
                        segment.time = before.time(atTick: resumeTick, ticksPerSecond: state.clock.ticksPerSecond)
                    }
                    segment.anchorTick = resumeTick
                }
                segment.effectiveTick = resumeTick
                state.segments[index] = segment
                lastMoved = index
            }
            guard let lastMoved else { return }
            // A later change that went on from where the timeline was goes on from where the moved
            // ones leave it (a resume placed past `resumeTick` after a pause that moved to it would
            // repeat what was heard in between), and so on down a chain of such changes.
            for index in state.segments.indices where index > lastMoved {
                guard state.segments[index].isContinuous else { break }
                let before = state.segments[index - 1]
                state.segments[index].time = before.time(atTick: state.segments[index].anchorTick, ticksPerSecond: state.clock.ticksPerSecond)
            }
            state.generation &+= 1
        }
    }

    /// Moves the timeline onto `newClock`, keeping the media time and rate it has now.
    public func switchClock(to newClock: any TimebaseClock) {
        state.withLock { state in
            let tick = state.clock.currentTick()
            let segment = Self.segment(in: state, forTick: tick)
            let now = segment.time(atTick: tick, ticksPerSecond: state.clock.ticksPerSecond)
            let newTick = newClock.earliestChangeableTick()
            state.clock = newClock
            state.renderClaim = .min
            // Ticks of the old clock: a route started on the new one counts from its own start.
            state.renderedSpans = []
            state.segments = [TimelineSegment(rate: segment.rate, time: now, anchorTick: newTick, effectiveTick: newTick)]
            state.generation &+= 1
        }
    }

    private static func segment(in state: State, forTick tick: Int64) -> TimelineSegment {
        lookup(in: state, tick: tick).segment
    }
}
