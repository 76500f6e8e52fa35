@testable import LongformSpeakerSender
import Testing

/// The sender's history of rendered audio: a paused span it skipped is held as silence, known as
/// unrendered through flushes and discards, and never counted as audio.
@Suite struct SentAudioTests {
    /// A history at 1 kHz, mono, holding `pieces` (first frame, frame count) appended in order.
    private func history(_ pieces: [(first: Int64, count: Int)]) -> SentAudio {
        var history = SentAudio(channelCount: 1, sampleRate: 1_000)
        for piece in pieces {
            let samples = [Float](repeating: 1, count: piece.count)
            samples.withUnsafeBufferPointer { history.append($0, at: piece.first) }
        }
        return history
    }

    @Test func aJumpForwardIsAnUnrenderedSpanThatSendingStepsOver() {
        let held = history([(0, 1_000), (5_000, 1_000)])
        #expect(held.unrenderedSpans == [1_000..<5_000] && held.endFrame == 6_000)
        #expect(held.firstRenderedFrame(from: 1_000) == 5_000 && held.firstRenderedFrame(from: 999) == 999)
        #expect(held.renderedFrames(from: 500, count: 4_096).count == 500, "a message ends where the span begins")
        #expect(held.renderedFrameCount(in: 0..<6_000) == 2_000 && held.renderedFrameCount(in: 2_000..<5_500) == 500)
    }

    @Test func aFlushInsideASpanKeepsItsStartAndAudioFromTheFlushIsRendered() {
        var held = history([(0, 1_000), (5_000, 1_000)])
        held.truncate(from: 3_000)
        #expect(held.unrenderedSpans == [1_000..<3_000] && held.endFrame == 3_000)
        let samples = [Float](repeating: 1, count: 500)
        samples.withUnsafeBufferPointer { held.append($0, at: 3_000) }
        #expect(held.firstRenderedFrame(from: 1_500) == 3_000 && held.renderedFrameCount(in: 0..<3_500) == 1_500)
        // Two pauses that touch (a flush back into one, then another) are stepped over at once.
        samples.withUnsafeBufferPointer { held.append($0, at: 4_000) }
        held.truncate(from: 3_800)
        samples.withUnsafeBufferPointer { held.append($0, at: 9_000) }
        #expect(held.unrenderedSpans == [1_000..<3_000, 3_500..<9_000] && held.firstRenderedFrame(from: 3_600) == 9_000)
    }

    @Test func discardingHeardAudioClipsTheSpansAndAFarJumpStartsAfresh() {
        var held = history([(0, 1_000), (6_000, 5_000)])
        held.discard(before: 7_000) // at least five seconds' worth (the batch): a copy
        #expect(held.startFrame == 7_000 && held.unrenderedSpans.isEmpty)
        held = history([(0, 1_000), (3_000, 5_000)])
        held.discard(before: 5_500)
        #expect(held.startFrame == 5_500 && held.unrenderedSpans.isEmpty)
        held = history([(0, 6_000), (7_000, 1_000)])
        held.discard(before: 5_000)
        #expect(held.unrenderedSpans == [6_000..<7_000])
        held = history([(0, 1_000), (10_000, 1_000)])
        held.discard(before: 6_000) // inside the span: what is left of it is from the new start
        #expect(held.startFrame == 6_000 && held.unrenderedSpans == [6_000..<10_000] && held.firstRenderedFrame(from: 6_000) == 10_000)
        let far = history([(0, 1_000), (2_000, 1_000), (100_000, 10)])
        #expect(far.startFrame == 100_000 && far.unrenderedSpans.isEmpty, "more than 30 s away: nothing before is kept")
    }
}
