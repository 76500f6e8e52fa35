@testable import LongformPulseAudio
import Testing

/// The PulseAudio route's copy of what it wrote, by route frame.
@Suite struct FrameHistoryTests {
    /// Stereo frames `frames` whose left sample is the frame's number and right its negative.
    static func numbered(_ frames: Range<Int64>) -> [Float] { frames.flatMap { [Float($0), -Float($0)] } }

    /// What `history` gives back for `frames`, or nil.
    static func copy(_ history: FrameHistory, _ frames: Range<Int64>) -> [Float]? {
        var destination = [Float](repeating: .nan, count: frames.count * 2)
        let isCopied = destination.withUnsafeMutableBufferPointer { history.copy(from: frames.lowerBound, count: frames.count, into: $0) }
        return isCopied ? destination : nil
    }

    /// Records `numbered(frames)` in `history`.
    static func record(_ history: inout FrameHistory, _ frames: Range<Int64>) {
        numbered(frames).withUnsafeBufferPointer { history.record($0, at: frames.lowerBound) }
    }

    /// Frames written across the end of the ring come back whole; frames overwritten or never written do not.
    @Test func itGivesBackWhatWasWrittenAcrossTheRingsWrap() {
        var history = FrameHistory(capacityFrames: 100, channelCount: 2)
        Self.record(&history, 0..<70)
        Self.record(&history, 70..<150)
        #expect(history.startFrame == 50 && history.endFrame == 150)
        #expect(Self.copy(history, 60..<140) == Self.numbered(60..<140))
        #expect(Self.copy(history, 50..<150) == Self.numbered(50..<150))
        // Overwritten by the wrap, or never written: nothing is copied.
        #expect(Self.copy(history, 49..<60) == nil)
        #expect(Self.copy(history, 140..<151) == nil)
    }

    /// A write at an earlier frame (where a flush resumed) replaces what was written from there on.
    @Test func aWriteAfterAFlushReplacesWhatFollowedIt() {
        var history = FrameHistory(capacityFrames: 100, channelCount: 2)
        Self.record(&history, 0..<90)
        // The server resumed at 40: frames from there on are written again, with other audio.
        let other: [Float] = (40..<60).flatMap { frame -> [Float] in [Float(1000 + frame), 0] }
        other.withUnsafeBufferPointer { history.record($0, at: 40) }
        #expect(history.endFrame == 60)
        #expect(Self.copy(history, 30..<60) == Self.numbered(30..<40) + other)
        #expect(Self.copy(history, 30..<61) == nil, "frames past the new end were taken back")
    }

    /// A write past the end starts the history afresh; one longer than the ring keeps its end.
    @Test func aWriteThatDoesNotFollowOnStartsItAfresh() {
        var history = FrameHistory(capacityFrames: 100, channelCount: 2)
        Self.record(&history, 0..<50)
        Self.record(&history, 60..<80)
        #expect(history.startFrame == 60)
        #expect(Self.copy(history, 45..<65) == nil)
        #expect(Self.copy(history, 60..<80) == Self.numbered(60..<80))
        // A write longer than the ring keeps its end.
        Self.record(&history, 80..<330)
        #expect(history.startFrame == 230 && history.endFrame == 330)
        #expect(Self.copy(history, 230..<330) == Self.numbered(230..<330))
    }
}
