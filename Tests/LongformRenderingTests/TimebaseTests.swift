import LongformCore
import LongformRendering
import Synchronization
import Testing

/// The timebase on a clock the test moves by hand: ticks heard, and ticks already rendered.
@Suite struct TimebaseTests {
    final class ManualClock: TimebaseClock {
        private let ticks = Mutex((heard: Int64(0), rendered: Int64(0)))
        /// For a clock that can rewind: how far after the tick heard a change can apply.
        let rewindMargin: Int64?
        init(rewindMargin: Int64? = nil) { self.rewindMargin = rewindMargin }
        var isRewindable: Bool { rewindMargin != nil }
        var ticksPerSecond: Int64 { 1_000 }
        func currentTick() -> Int64 { ticks.withLock { $0.heard } }
        func earliestChangeableTick() -> Int64 { ticks.withLock { ticks in rewindMargin.map { ticks.heard + $0 } ?? ticks.rendered } }
        func tick(atHostTime hostTime: UInt64) -> Int64 { Int64(hostTime / 1_000_000) }
        func set(heard: Int64, rendered: Int64) { ticks.withLock { $0 = (heard, rendered) } }
    }

    static func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1_000) }

    /// A timeline playing from tick 5 on a clock that can rewind (margin 5), rendered to tick
    /// 2,000 and heard to tick 100.
    static func playingFromTick5RenderedTo2000() -> (ManualClock, Timebase) {
        let clock = ManualClock(rewindMargin: 5)
        let timebase = Timebase(clock: clock)
        timebase.setRate(1, time: .zero, atHostTime: nil)
        _ = timebase.segmentForRendering(fromTick: 5, count: 1_995)
        clock.set(heard: 100, rendered: 2_000)
        return (clock, timebase)
    }

    @Test func aChangeAppliesWhenItCanBeHeard() {
        let clock = ManualClock()
        let timebase = Timebase(clock: clock)
        clock.set(heard: 0, rendered: 100) // 100 ms already with the device
        timebase.setRate(1, time: Self.ms(5_000), atHostTime: nil)
        // A stopped timeline reads the new time at once and waits there for the audio.
        #expect(timebase.currentTime() == Self.ms(5_000))
        clock.set(heard: 100, rendered: 200)
        #expect(timebase.currentTime() == Self.ms(5_000))
        clock.set(heard: 150, rendered: 250)
        #expect(timebase.currentTime() == Self.ms(5_050))
    }

    @Test func twoChangesWithinTheLatencyBothCount() {
        let clock = ManualClock()
        let timebase = Timebase(clock: clock)
        clock.set(heard: 0, rendered: 100)
        timebase.setRate(1, time: .zero, atHostTime: nil)     // plays from tick 100
        clock.set(heard: 50, rendered: 200)
        timebase.setRate(0, time: .invalid, atHostTime: nil)  // pauses from tick 200, before the start is heard
        clock.set(heard: 150, rendered: 300)
        #expect(timebase.currentTime() == Self.ms(50), "the start, not yet heard when the pause came, was lost")
        clock.set(heard: 250, rendered: 300)
        #expect(timebase.currentTime() == Self.ms(100), "paused at 100 ms of audio")
        #expect(timebase.rate == 0)
    }

    @Test func aChangeNeverReachesTicksAlreadyRendered() {
        let clock = ManualClock()
        let timebase = Timebase(clock: clock)
        clock.set(heard: 0, rendered: 0)
        timebase.setRate(1, time: .zero, atHostTime: nil)
        _ = timebase.segmentForRendering(fromTick: 0, count: 400) // a render in progress
        timebase.setRate(1, time: Self.ms(9_000), atHostTime: nil)
        #expect(timebase.segment(forTick: 399).segment.time(atTick: 399, ticksPerSecond: 1_000) == Self.ms(399))
        #expect(timebase.segment(forTick: 400).segment.time(atTick: 400, ticksPerSecond: 1_000) == Self.ms(9_000))
        timebase.releaseRenderClaim(downTo: 400)
    }

    @Test func aChangeWaitingForAClaimNeverRenderedAppliesWhereRenderingStopped() {
        let clock = ManualClock()
        let timebase = Timebase(clock: clock)
        // An as-fast-as-possible route claims ticks while the timeline stands still, renders
        // nothing, and gives them back; the start that came meanwhile must not wait for them.
        _ = timebase.segmentForRendering(fromTick: 0, count: 8_192)
        timebase.setRate(1, time: Self.ms(2_000), atHostTime: nil)
        timebase.releaseRenderClaim(downTo: 0)
        #expect(timebase.segment(forTick: 0).segment.rate == 1)
        #expect(timebase.segment(forTick: 0).segment.time(atTick: 0, ticksPerSecond: 1_000) == Self.ms(2_000))
    }

    @Test func onARewindableClockAChangeReachesIntoWhatIsRendered() {
        let clock = ManualClock(rewindMargin: 5)
        let timebase = Timebase(clock: clock)
        clock.set(heard: 0, rendered: 0)
        timebase.setRate(1, time: .zero, atHostTime: nil)
        clock.set(heard: 100, rendered: 2_000) // two seconds with the device, which can take them back
        _ = timebase.segmentForRendering(fromTick: 2_000, count: 400)
        let change = timebase.setRate(1, time: Self.ms(9_000), atHostTime: nil)
        #expect(change.effectiveTick == 105)
        #expect(timebase.segment(forTick: 104).segment.time(atTick: 104, ticksPerSecond: 1_000) == Self.ms(99))
        #expect(timebase.segment(forTick: 105).segment.time(atTick: 105, ticksPerSecond: 1_000) == Self.ms(9_000))
    }

    @Test func aRouteThatResumesLateMovesTheChangesItMissed() {
        let clock = ManualClock(rewindMargin: 5)
        let timebase = Timebase(clock: clock)
        timebase.setRate(1, time: .zero, atHostTime: nil)              // plays from tick 5
        clock.set(heard: 100, rendered: 2_000)
        timebase.setRate(0, time: .invalid, atHostTime: nil)          // pauses from tick 105 ...
        timebase.routeResumed(atTick: 120, afterRewindTo: 105)        // ... but the route played on to 120
        #expect(timebase.segment(forTick: 119).segment.rate == 1)
        #expect(timebase.segment(forTick: 120).segment.time(atTick: 130, ticksPerSecond: 1_000) == Self.ms(115), "paused where the audio stopped")
        timebase.setRate(1, time: Self.ms(9_000), atHostTime: nil)    // a seek from tick 105 ...
        timebase.routeResumed(atTick: 110, afterRewindTo: 105)        // ... heard from 110, from its start
        #expect(timebase.segment(forTick: 110).segment.time(atTick: 110, ticksPerSecond: 1_000) == Self.ms(9_000))
    }

    @Test func theEarliestTimeAheadIsWhereAJumpBackLands() {
        let clock = ManualClock(rewindMargin: 5)
        let timebase = Timebase(clock: clock)
        timebase.setRate(1, time: Self.ms(10_000), atHostTime: nil)   // 10 s from tick 5
        clock.set(heard: 1_000, rendered: 1_000)
        timebase.setRate(0, time: .invalid, atHostTime: nil)           // stopped at 11 s from tick 1005
        clock.set(heard: 1_500, rendered: 1_500)
        timebase.setRate(1, time: .zero, atHostTime: nil)              // 0 s from tick 1505
        #expect(timebase.earliestTime(fromTick: 500) == .zero)
        #expect(timebase.earliestTime(fromTick: 2_000) == Self.ms(495))
        #expect(timebase.earliestTime(fromTick: 1_200) == .zero)
    }

    /// A pause heard late, then a resume placed before where the pause was heard (it replaces the
    /// pause), heard late too: the ticks in between played the pause's silence, so the timeline
    /// goes on from where the pause stopped it. (Before, it went on from where playing would have
    /// reached, and that much audio was never heard.)
    @Test func aResumeThatReplacedARenderedPauseGoesOnFromThePause() {
        let clock = ManualClock(rewindMargin: 5)
        let timebase = Timebase(clock: clock)
        timebase.setRate(1, time: .zero, atHostTime: nil)              // plays from tick 5
        _ = timebase.segmentForRendering(fromTick: 0, count: 2_000)   // (rendered in two spans: stopped, then playing)
        _ = timebase.segmentForRendering(fromTick: 5, count: 1_995)
        clock.set(heard: 100, rendered: 2_000)
        timebase.setRate(0, time: .invalid, atHostTime: nil)          // pauses from tick 105 ...
        timebase.routeResumed(atTick: 120, afterRewindTo: 105)        // ... heard from 120, at 115 ms
        _ = timebase.segmentForRendering(fromTick: 120, count: 1_880) // the route renders the pause's silence
        clock.set(heard: 101, rendered: 2_000)
        timebase.setRate(1, time: .invalid, atHostTime: nil)          // resumes from tick 106, replacing the pause ...
        timebase.routeResumed(atTick: 130, afterRewindTo: 106)        // ... heard from 130: 120..<130 were silence
        #expect(timebase.segment(forTick: 130).segment.rate == 1)
        #expect(timebase.segment(forTick: 130).segment.time(atTick: 130, ticksPerSecond: 1_000) == Self.ms(115), "goes on where the pause stopped")
        #expect(timebase.segment(forTick: 119).segment.time(atTick: 119, ticksPerSecond: 1_000) == Self.ms(114))
    }

    /// A pause and, a moment later, a resume placed past where the route then resumes: the pause
    /// moves to that tick and stops at the time heard there, and the resume goes on from it.
    /// (Before, the resume kept the time the pause had before it moved, and repeated the audio
    /// heard in between: 60 frames in a CI run of `aPauseAndAResumeLoseAndRepeatNothing`.)
    @Test func aResumeBeyondWhereTheRouteResumedGoesOnFromThePauseItMoved() {
        let (clock, timebase) = Self.playingFromTick5RenderedTo2000()
        timebase.setRate(0, time: .invalid, atHostTime: nil)          // pauses from tick 105, at 100 ms ...
        clock.set(heard: 110, rendered: 2_000)
        timebase.setRate(1, time: .invalid, atHostTime: nil)          // resumes from tick 115, at 100 ms ...
        timebase.routeResumed(atTick: 112, afterRewindTo: 105)        // ... but the route played on to 112
        #expect(timebase.segment(forTick: 111).segment.time(atTick: 111, ticksPerSecond: 1_000) == Self.ms(106))
        #expect(timebase.segment(forTick: 112).segment.rate == 0)
        #expect(timebase.segment(forTick: 114).segment.time(atTick: 114, ticksPerSecond: 1_000) == Self.ms(107), "paused where the audio stopped")
        #expect(timebase.segment(forTick: 115).segment.rate == 1)
        #expect(timebase.segment(forTick: 115).segment.time(atTick: 115, ticksPerSecond: 1_000) == Self.ms(107), "goes on where the pause stopped")
    }

    /// A seek rendered from its first tick, silent at first (its audio came late), then a rewind
    /// for that audio that the route could only take from a later tick: what was heard up to
    /// there is the seek's, so it goes on from it. (Before, the seek moved to that tick and
    /// started again: a CI run of `pauseResumeAndSeekReachTheSpeaker…` heard 35 frames of it twice.)
    @Test func aSeekAlreadyRenderedStaysWhenTheRewindForItsAudioResumesLate() {
        let (clock, timebase) = Self.playingFromTick5RenderedTo2000()
        timebase.setRate(1, time: Self.ms(9_000), atHostTime: nil)    // a seek from tick 105 ...
        _ = timebase.segmentForRendering(fromTick: 105, count: 40)    // ... rendered (silent: no audio yet) to 145
        clock.set(heard: 110, rendered: 145)
        timebase.routeResumed(atTick: 130, afterRewindTo: 105)        // its audio came; the route takes it from 130 only
        #expect(timebase.segment(forTick: 129).segment.time(atTick: 129, ticksPerSecond: 1_000) == Self.ms(9_024))
        #expect(timebase.segment(forTick: 130).segment.time(atTick: 130, ticksPerSecond: 1_000) == Self.ms(9_025), "the seek's first 25 ms were heard; they are not played again")
    }

    /// What the old route rendered says nothing about a new clock's ticks, which start again.
    @Test func aNewClockForgetsWhatTheOldOneRendered() {
        let (_, timebase) = Self.playingFromTick5RenderedTo2000()
        timebase.setRate(0, time: .invalid, atHostTime: nil)
        _ = timebase.segmentForRendering(fromTick: 105, count: 1_895) // the old route renders the pause from 105
        let newClock = ManualClock(rewindMargin: 5)
        timebase.switchClock(to: newClock)                            // playing, at 95 ms from tick 5
        newClock.set(heard: 100, rendered: 105)
        timebase.setRate(0, time: .invalid, atHostTime: nil)          // pauses from 105, at 195 ms ...
        timebase.routeResumed(atTick: 110, afterRewindTo: 105)        // ... heard from 110, where playing reached 200 ms
        // (The old route's pause, noted at ticks 105 on, would have put it at 100 ms.)
        #expect(timebase.segment(forTick: 110).segment.time == Self.ms(200))
    }
}
