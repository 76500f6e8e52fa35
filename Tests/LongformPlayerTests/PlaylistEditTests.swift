import Foundation
import LongformTestSupport
import Testing

/// Edits made while the playlist plays, each at an exact output frame on the as-fast-as-possible
/// WAV route with a 60 s look-ahead (so every edit lands on audio already enqueued), checked on
/// the samples that came out: against the model of what must be heard, and for the claim each
/// test is about.
@Suite struct PlaylistEditTests {
    // Items of 1 s, 0.75 s, 0.875 s and 0.625 s at 8 kHz; `e` is a fifth, for insertions.
    let a = PlaylistModel.Item.coded(1, frames: 8_000)
    let b = PlaylistModel.Item.coded(2, frames: 6_000)
    let c = PlaylistModel.Item.coded(3, frames: 7_000)
    let d = PlaylistModel.Item.coded(4, frames: 5_000)
    let e = PlaylistModel.Item.coded(5, frames: 3_000)
    var all: [PlaylistModel.Item] { [a, b, c, d] }

    /// The output, checked against the model; returns it for the test's own claims.
    func heard(_ playlist: [PlaylistModel.Item], _ edits: [ScriptedRun.Edit]) throws -> [CodedAudio.Frame] {
        let difference = try ScriptedRun.check(playlist, edits: edits)
        #expect(difference == nil, "\(difference ?? "")")
        return try ScriptedRun.render(playlist, edits: edits).frames
    }

    /// The output as runs: `"item 1 frames 0..<8000, item 3 frames 0..<7000"`.
    func runs(_ frames: [CodedAudio.Frame]) -> String { CodedAudio.summary(frames[...]) }

    @Test func withoutEditsTheItemsPlayBackToBack() throws {
        #expect(runs(try heard(all, [])) == "item 1 frames 0..<8000, item 2 frames 0..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
    }

    @Test func removingTheNextItemWhileItIsEnqueuedRemovesEverySampleOfIt() throws {
        let frames = try heard(all, [(4_000, .remove(1))])
        #expect(!frames.contains { if case .item(2, _) = $0 { true } else { false } }, "a sample of the removed item was heard")
        // The current item is uninterrupted and the one after the removed item follows gaplessly.
        #expect(runs(frames) == "item 1 frames 0..<8000, item 3 frames 0..<7000, item 4 frames 0..<5000")
    }

    @Test func insertingMovingAndReplacingUpcomingItemsLeaveTheCurrentItemUninterrupted() throws {
        #expect(runs(try heard(all, [(4_000, .insert(1, e))])) == "item 1 frames 0..<8000, item 5 frames 0..<3000, item 2 frames 0..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
        #expect(runs(try heard(all, [(4_000, .move(3, 1))])) == "item 1 frames 0..<8000, item 4 frames 0..<5000, item 2 frames 0..<6000, item 3 frames 0..<7000")
        #expect(runs(try heard(all, [(4_000, .replace(2, e))])) == "item 1 frames 0..<8000, item 2 frames 0..<6000, item 5 frames 0..<3000, item 4 frames 0..<5000")
        // Moving the current item keeps it playing; what follows it is its new neighbour.
        #expect(runs(try heard(all, [(4_000, .move(0, 2))])) == "item 1 frames 0..<8000, item 4 frames 0..<5000")
    }

    @Test func removingOrReplacingTheCurrentItemCutsItAtTheEditFrame() throws {
        #expect(runs(try heard(all, [(4_000, .remove(0))])) == "item 1 frames 0..<4000, item 2 frames 0..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
        #expect(runs(try heard(all, [(4_000, .replace(0, e))])) == "item 1 frames 0..<4000, item 5 frames 0..<3000, item 2 frames 0..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
        // Removing the current last item ends the playlist there.
        #expect(runs(try heard([a, b], [(9_000, .remove(1))])) == "item 1 frames 0..<8000, item 2 frames 0..<1000")
    }

    @Test func seeksWithinAndAcrossItemsLandOnTheExactFrame() throws {
        #expect(runs(try heard(all, [(4_000, .seek(index: nil, frames: 100))])) == "item 1 frames 0..<4000, item 1 frames 100..<8000, item 2 frames 0..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
        #expect(runs(try heard(all, [(4_000, .seek(index: 2, frames: 1_234))])) == "item 1 frames 0..<4000, item 3 frames 1234..<7000, item 4 frames 0..<5000")
        // A seek past the end of an item goes on with the next.
        #expect(runs(try heard(all, [(4_000, .seek(index: nil, frames: 9_000))])) == "item 1 frames 0..<4000, item 2 frames 0..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
    }

    @Test func nextAndPreviousAndNextOnTheLastItem() throws {
        #expect(runs(try heard(all, [(4_000, .next), (7_000, .previous)])) == "item 1 frames 0..<4000, item 2 frames 0..<3000, item 1 frames 0..<8000, item 2 frames 0..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
        #expect(runs(try heard(all, [(1_000, .previous)])) == "item 1 frames 0..<1000, item 1 frames 0..<8000, item 2 frames 0..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
        #expect(runs(try heard([a, b], [(9_000, .next)])) == "item 1 frames 0..<8000, item 2 frames 0..<1000")
    }

    @Test func editsAFewMillisecondsBeforeAndExactlyAtABoundary() throws {
        // 1.25 ms before the end of item 1, item 2 is removed; item 2 then becomes current exactly
        // at the boundary, and the edit at that frame applies to it.
        #expect(runs(try heard(all, [(7_990, .remove(1))])) == "item 1 frames 0..<8000, item 3 frames 0..<7000, item 4 frames 0..<5000")
        #expect(runs(try heard(all, [(7_999, .insert(1, e))])) == "item 1 frames 0..<8000, item 5 frames 0..<3000, item 2 frames 0..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
        #expect(runs(try heard(all, [(8_000, .remove(1))])) == "item 1 frames 0..<8000, item 3 frames 0..<7000, item 4 frames 0..<5000")
        #expect(runs(try heard(all, [(8_000, .next)])) == "item 1 frames 0..<8000, item 3 frames 0..<7000, item 4 frames 0..<5000")
    }

    @Test func failedItemsAreSkippedAndTheTimelineStaysExact() throws {
        let missing = PlaylistModel.Item.missing(serial: 90)
        #expect(runs(try heard([a, missing, b, missing, missing, c], [])) == "item 1 frames 0..<8000, item 2 frames 0..<6000, item 3 frames 0..<7000")
        #expect(runs(try heard([missing, a], [])) == "item 1 frames 0..<8000")
        // A failed item inserted next, and one seeked to.
        #expect(runs(try heard(all, [(4_000, .insert(1, missing)), (10_000, .seek(index: 1, frames: 0))])) == "item 1 frames 0..<8000, item 2 frames 0..<2000, item 2 frames 0..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
    }

    @Test func theSameFileTwiceIsTwoItems() throws {
        let again = PlaylistModel.Item.coded(1, frames: 8_000, serial: 100)
        #expect(runs(try heard([a, again, b], [])) == "item 1 frames 0..<8000, item 1 frames 0..<8000, item 2 frames 0..<6000")
        // Removing the second copy while the first plays removes only the second.
        #expect(runs(try heard([a, again, b], [(2_000, .remove(1))])) == "item 1 frames 0..<8000, item 2 frames 0..<6000")
    }

    @Test func aRouteChangeInTheMiddleOfAnItemLosesAndRepeatsNothing() throws {
        #expect(runs(try heard(all, [(4_321, .routeChange)])) == "item 1 frames 0..<8000, item 2 frames 0..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
        // After a seek the timeline starts afresh; the route change still resumes at the right offset.
        #expect(runs(try heard(all, [(9_000, .seek(index: nil, frames: 3_000)), (9_500, .routeChange)])) == "item 1 frames 0..<8000, item 2 frames 0..<1000, item 2 frames 3000..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
    }

    @Test func aPauseHoldsThePlayheadWhileSilenceIsHeard() throws {
        #expect(runs(try heard(all, [(4_000, .pause), (6_000, .play)])) == "item 1 frames 0..<4000, silence ×2000, item 1 frames 4000..<8000, item 2 frames 0..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
        // Edits made while paused take effect, and playing resumes where they left the playhead.
        #expect(runs(try heard(all, [(4_000, .pause), (5_000, .next), (6_000, .play)])) == "item 1 frames 0..<4000, silence ×2000, item 2 frames 0..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
    }

    @Test func aBadIndexIsRefusedAndChangesNothing() throws {
        let result = try ScriptedRun.render(all, edits: [(4_000, .remove(9)), (4_000, .move(0, 4))])
        #expect(result.refused.count == 2)
        #expect(result.refused.first?.contains("index 9 is outside the playlist (4 items)") == true, "\(result.refused)")
        #expect(runs(result.frames) == "item 1 frames 0..<8000, item 2 frames 0..<6000, item 3 frames 0..<7000, item 4 frames 0..<5000")
    }
}
