@testable import LongformRendering
import Testing

/// The renderer's rewind policy, event by event: what is held, merged and sent.
@Suite struct RewindBatchTests {
    @Test func outsideABatchARewindGoesAtOnce() {
        var batch = RewindBatch()
        #expect(batch.request(toFrame: 500) == 500)
        #expect(batch.pendingFrame == nil)
    }

    @Test func aBatchHoldsItsRewindsAndSendsTheEarliestOnceAtItsEnd() {
        var batch = RewindBatch()
        #expect(batch.begin() == 1)
        #expect(batch.request(toFrame: 900) == nil)
        #expect(batch.request(toFrame: 400) == nil)
        #expect(batch.request(toFrame: 700) == nil)
        #expect(batch.end() == 400)
    }

    @Test func nestedBatchesSendWhenTheOutermostEnds() {
        var batch = RewindBatch()
        #expect(batch.begin() == 1)
        #expect(batch.begin() == nil)
        #expect(batch.request(toFrame: 300) == nil)
        #expect(batch.end() == nil)
        #expect(batch.request(toFrame: 200) == nil)
        #expect(batch.end() == 200)
        // A batch with no rewind sends nothing.
        #expect(batch.begin() == 2)
        #expect(batch.end() == nil)
    }

    @Test func aDeadlineSendsWhatTheOpenBatchHoldsAndTheBatchGoesOn() {
        var batch = RewindBatch()
        let first = batch.begin()
        #expect(batch.request(toFrame: 800) == nil)
        #expect(batch.deadlinePassed(ofBatch: first!) == 800)
        #expect(batch.request(toFrame: 850) == nil)
        #expect(batch.end() == 850)
        // A deadline set for a batch that has ended, or for an earlier one, sends nothing.
        #expect(batch.deadlinePassed(ofBatch: first!) == nil)
        let second = batch.begin()
        #expect(batch.request(toFrame: 10) == nil)
        #expect(batch.deadlinePassed(ofBatch: first!) == nil)
        #expect(batch.end() == 10)
        #expect(batch.deadlinePassed(ofBatch: second!) == nil)
    }

    @Test func aRouteChangeForgetsWhatIsHeld() {
        var batch = RewindBatch()
        _ = batch.begin()
        #expect(batch.request(toFrame: 100) == nil)
        batch.forgetPending()
        #expect(batch.end() == nil)
    }
}
