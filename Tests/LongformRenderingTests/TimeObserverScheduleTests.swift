import LongformCore
import LongformRendering
import Testing

/// The observer rules without threads: what fires when the timeline moves.
@Suite struct TimeObserverScheduleTests {
    static func t(_ seconds: Double) -> MediaTime { MediaTime(seconds: seconds, preferredTimescale: 1000) }

    @Test func aBoundaryFiresOnceWhenPassed() {
        var schedule = TimeObserverSchedule()
        schedule.reset(to: .zero, generation: 0, rate: 1)
        let id = schedule.addBoundary(times: [Self.t(1), Self.t(2)])
        _ = schedule.advance(to: .zero, generation: 0, rate: 1)
        #expect(schedule.advance(to: Self.t(0.5), generation: 0, rate: 1).isEmpty)
        #expect(schedule.advance(to: Self.t(1.0), generation: 0, rate: 1) == [.init(id: id, time: Self.t(1))])
        #expect(schedule.advance(to: Self.t(1.5), generation: 0, rate: 1).isEmpty)
        #expect(schedule.advance(to: Self.t(1.5), generation: 0, rate: 1).isEmpty)
        #expect(schedule.advance(to: Self.t(2.5), generation: 0, rate: 1) == [.init(id: id, time: Self.t(2))])
    }

    @Test func aJumpOverBoundariesFiresEachOnceInOrder() {
        var schedule = TimeObserverSchedule()
        schedule.reset(to: .zero, generation: 0, rate: 1)
        let first = schedule.addBoundary(times: [Self.t(3), Self.t(1)])
        let second = schedule.addBoundary(times: [Self.t(2)])
        _ = schedule.advance(to: .zero, generation: 0, rate: 1)
        let firings = schedule.advance(to: Self.t(10), generation: 1, rate: 1)
        #expect(firings == [.init(id: first, time: Self.t(1)), .init(id: second, time: Self.t(2)), .init(id: first, time: Self.t(3))])
        #expect(schedule.advance(to: Self.t(11), generation: 1, rate: 1).isEmpty)
    }

    @Test func goingBackRearmsAndAPassageAgainFiresAgain() {
        var schedule = TimeObserverSchedule()
        schedule.reset(to: .zero, generation: 0, rate: 1)
        let id = schedule.addBoundary(times: [Self.t(5)])
        _ = schedule.advance(to: Self.t(6), generation: 0, rate: 1)
        #expect(schedule.advance(to: Self.t(1), generation: 1, rate: 1).isEmpty)
        #expect(schedule.advance(to: Self.t(5), generation: 1, rate: 1) == [.init(id: id, time: Self.t(5))])
    }

    @Test func aBoundaryAddedExactlyAtThePlayheadFiresOnce() {
        var schedule = TimeObserverSchedule()
        schedule.reset(to: .zero, generation: 0, rate: 1)
        _ = schedule.addPeriodic(interval: Self.t(100))
        _ = schedule.advance(to: Self.t(3), generation: 0, rate: 1)
        let id = schedule.addBoundary(times: [Self.t(3)])
        #expect(schedule.nextBoundary(after: Self.t(3)) == nil)
        #expect(schedule.advance(to: Self.t(3), generation: 0, rate: 1).map(\.id) == [id])
        #expect(schedule.advance(to: Self.t(3), generation: 0, rate: 1).isEmpty)
    }

    @Test func aRemovedObserverNeverFires() {
        var schedule = TimeObserverSchedule()
        schedule.reset(to: .zero, generation: 0, rate: 1)
        let id = schedule.addBoundary(times: [Self.t(1)])
        schedule.remove(id)
        #expect(schedule.advance(to: Self.t(2), generation: 0, rate: 1).isEmpty)
        #expect(schedule.isEmpty)
    }

    @Test func periodicObserversFireEachIntervalAndOnJumpsAndRateChanges() {
        var schedule = TimeObserverSchedule()
        schedule.reset(to: .zero, generation: 0, rate: 1)
        let id = schedule.addPeriodic(interval: Self.t(0.1))
        #expect(schedule.advance(to: .zero, generation: 0, rate: 1).map(\.id) == [id])
        #expect(schedule.advance(to: Self.t(0.05), generation: 0, rate: 1).isEmpty)
        #expect(schedule.advance(to: Self.t(0.1), generation: 0, rate: 1).map(\.id) == [id])
        #expect(schedule.advance(to: Self.t(0.12), generation: 1, rate: 1).map(\.id) == [id], "a jump")
        #expect(schedule.advance(to: Self.t(0.13), generation: 1, rate: 0).map(\.id) == [id], "a rate change")
        #expect(schedule.advance(to: Self.t(0.13), generation: 1, rate: 0).isEmpty)
    }

    @Test func aBoundaryPassedAfterTheLastEvaluationIsDueAtOnce() {
        // The timer evaluated just before the playlist's end (5 s) and re-armed just after it:
        // armed by the boundaries after "now" alone, it was disarmed and the end never fired.
        var schedule = TimeObserverSchedule()
        schedule.reset(to: .zero, generation: 0, rate: 1)
        let end = schedule.addBoundary(times: [Self.t(5)])
        #expect(schedule.advance(to: Self.t(4.999), generation: 0, rate: 1).isEmpty)
        #expect(schedule.nextDueTime(at: Self.t(5.001)) == Self.t(5), "the end, not passed at the last evaluation: due at once")
        #expect(schedule.advance(to: Self.t(5.002), generation: 0, rate: 1) == [.init(id: end, time: Self.t(5))])
        #expect(schedule.nextDueTime(at: Self.t(5.003)) == nil, "nothing left once it fired")
    }

    @Test func theNextDueTimeIsTheEarliestOfBoundariesAndIntervals() {
        var schedule = TimeObserverSchedule()
        schedule.reset(to: .zero, generation: 0, rate: 1)
        _ = schedule.addBoundary(times: [Self.t(2)])
        #expect(schedule.nextDueTime(at: .zero) == Self.t(2))
        _ = schedule.advance(to: Self.t(0.5), generation: 0, rate: 1)
        _ = schedule.addBoundary(times: [Self.t(0.5)])
        #expect(schedule.nextDueTime(at: Self.t(0.6)) == Self.t(0.5), "a boundary added at the last evaluation's time is due there")
        _ = schedule.advance(to: Self.t(0.6), generation: 0, rate: 1)
        #expect(schedule.nextDueTime(at: Self.t(0.6)) == Self.t(2))
        _ = schedule.addPeriodic(interval: Self.t(1))
        #expect(schedule.nextDueTime(at: Self.t(0.7)) == Self.t(0.7), "a periodic observer not fired yet is due now")
        _ = schedule.advance(to: Self.t(0.7), generation: 0, rate: 1)
        #expect(schedule.nextDueTime(at: Self.t(0.8)) == Self.t(1.7))
    }

    @Test func nextBoundaryIsTheEarliestAfterTheTime() {
        var schedule = TimeObserverSchedule()
        _ = schedule.addBoundary(times: [Self.t(5), Self.t(9)])
        _ = schedule.addBoundary(times: [Self.t(7)])
        #expect(schedule.nextBoundary(after: Self.t(5)) == Self.t(7))
        #expect(schedule.nextBoundary(after: Self.t(9)) == nil)
    }

    /// An as-fast-as-possible route asks before it renders past `time`: a boundary added exactly at
    /// the playhead after an evaluation is there until the next evaluation fires it.
    @Test func aBoundaryAddedAtThePlayheadIsNewUntilItFires() {
        var schedule = TimeObserverSchedule()
        schedule.reset(to: Self.t(0), generation: 0, rate: 1)
        #expect(schedule.advance(to: Self.t(4), generation: 0, rate: 1).isEmpty)
        let id = schedule.addBoundary(times: [Self.t(4)])
        #expect(schedule.hasNewBoundary(at: Self.t(4)))
        #expect(!schedule.hasNewBoundary(at: Self.t(5)))
        #expect(schedule.nextBoundary(after: Self.t(4)) == nil, "strictly after: the route's other check misses it")
        #expect(schedule.advance(to: Self.t(4), generation: 0, rate: 1) == [.init(id: id, time: Self.t(4))])
        #expect(!schedule.hasNewBoundary(at: Self.t(4)))
    }
}
