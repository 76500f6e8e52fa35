import Foundation
import LongformCore
@testable import LongformRendering
import Testing

/// From where a rewindable route renders again for late audio, and one rewind for a batch of
/// changes, carried out on a route that records them: no thread renders.
@Suite struct RewindCoordinatorTests {
    /// A rewindable route that only records the rewinds it is asked for.
    typealias RecordingRoute = ReviewRegressionTests.HandDrivenRoute

    /// A timeline segment at 1,000 ticks a second: `rate` from `anchorTick`, media time `time` (ms) there.
    private static func segment(rate: Double, time: Int64 = 0, anchorTick: Int64 = 0) -> TimelineSegment {
        TimelineSegment(rate: rate, time: MediaTime(value: time, timescale: 1_000), anchorTick: anchorTick, effectiveTick: anchorTick)
    }

    /// `frameToRenderAgain` at 1 kHz for media time `time` (ms), the earliest changeable frame `earliest`.
    private static func frame(for time: Int64, earliest: Int64, _ segment: TimelineSegment, nextChange: Int64? = nil) -> Int64? {
        RewindCoordinator.frameToRenderAgain(forMediaTime: MediaTime(value: time, timescale: 1_000), earliestChangeableFrame: earliest,
                                             timeline: (segment, nextChange), sampleRate: 1_000)
    }

    @Test func lateAudioIsRenderedAgainFromWhereItPlays() {
        // Playing media time t at tick t: audio for 500 ms is heard from frame 500, not the earliest (100).
        #expect(Self.frame(for: 500, earliest: 100, Self.segment(rate: 1)) == 500)
        // Audio for a time already past the earliest frame: from the earliest.
        #expect(Self.frame(for: 50, earliest: 100, Self.segment(rate: 1)) == 100)
        // A change of the timeline before that time: what comes after it may differ, so from the earliest.
        #expect(Self.frame(for: 500, earliest: 100, Self.segment(rate: 1), nextChange: 300) == 100)
        #expect(Self.frame(for: 500, earliest: 100, Self.segment(rate: 1), nextChange: 700) == 500)
    }

    @Test func aStoppedTimelineIsRenderedAgainOnlyWhenItIsToMove() {
        #expect(Self.frame(for: 500, earliest: 100, Self.segment(rate: 0)) == nil, "silence that no audio changes")
        #expect(Self.frame(for: 500, earliest: 100, Self.segment(rate: 0), nextChange: 200) == 100)
        #expect(Self.frame(for: 500, earliest: 100, Self.segment(rate: 2)) == 100, "another rate: from the earliest")
    }

    @Test func aBatchOfChangesRewindsOnceFromItsEarliestFrame() {
        // A deadline no descheduled test thread reaches: only the batch's end sends the rewind.
        let coordinator = RewindCoordinator(batchDeadline: 3_600), route = RecordingRoute()
        coordinator.rewind(route, toFrame: 40)
        #expect(route.rewinds == [40], "outside a batch, at once")
        coordinator.batching(route: { route }) {
            coordinator.rewind(route, toFrame: 300)
            coordinator.batching(route: { route }) { coordinator.rewind(route, toFrame: 200) }
            #expect(route.rewinds == [40], "held until the outermost batch ends")
            coordinator.rewind(route, toFrame: 250)
        }
        #expect(route.rewinds == [40, 200])
        // A rewind held for a route no longer played to is forgotten.
        coordinator.batching(route: { route }) {
            coordinator.rewind(route, toFrame: 90)
            coordinator.forgetPending()
        }
        #expect(route.rewinds == [40, 200])
    }

    @Test func aBatchThatLastsPastItsDeadlineLetsWhatItHoldsBeHeard() {
        let coordinator = RewindCoordinator(), route = RecordingRoute()
        coordinator.batching(route: { route }) {
            coordinator.rewind(route, toFrame: 70)
            // A slow file opening: the deadline (10 ms) passes, and the held rewind goes out while
            // the batch is still open (waited for up to 5 s: a loaded machine runs the timer late).
            let deadline = Date(timeIntervalSinceNow: 5)
            while route.rewinds.isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            #expect(route.rewinds == [70])
            coordinator.rewind(route, toFrame: 60)
        }
        #expect(route.rewinds == [70, 60])
    }
}
