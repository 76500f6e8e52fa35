import Foundation
import LongformCore
import LongformRendering
import LongformRoutes
import Testing

/// A group's parts without threads: the leader's recorded audio as followers read it, the margin
/// the group's clock follows, and the start time its members agree on.
struct RouteGroupTests {
    /// Mono frames `values` as samples.
    /// Records `values` as the leader renders them: begun after every rewind so far, unless `generation` says when.
    private func record(_ values: [Float], at frame: Int64, into audio: inout RenderedAudio, generation: Int? = nil) {
        let begun = generation ?? audio.generation
        values.withUnsafeBufferPointer { audio.record($0, at: frame, renderedInGeneration: begun) }
    }

    private func read(_ audio: RenderedAudio, from frame: Int64, count: Int) -> (samples: [Float], copied: Int) {
        var out = [Float](repeating: -1, count: count * audio.channelCount)
        let copied = out.withUnsafeMutableBufferPointer { audio.read(into: $0, from: frame, count: count) }
        return (out, copied)
    }

    @Test func followersReadWhatTheLeaderRenderedAndARenderReplacesFromItsStart() {
        var audio = RenderedAudio(channelCount: 1)
        record([1, 2, 3, 4], at: 10, into: &audio)
        record([5, 6], at: 14, into: &audio)
        #expect(audio.readableFrameCount(from: 11) == 5)
        #expect(read(audio, from: 9, count: 8) == ([0, 1, 2, 3, 4, 5, 6, 0], 6))
        // Rendered again from 12 (a rewind the leader took at once): the old frames from 12 on are gone.
        record([7], at: 12, into: &audio)
        #expect(read(audio, from: 10, count: 4) == ([1, 2, 7, 0], 3))
        audio.discard(before: 12)
        #expect(audio.frameCount == 1)
    }

    @Test func aRewindHoldsTheAudioFromItsFrameUntilTheLeaderAnswers() {
        var audio = RenderedAudio(channelCount: 1)
        record([1, 2, 3, 4, 5, 6], at: 0, into: &audio)
        let before = audio.generation
        audio.rewind(toFrame: 3)
        #expect(audio.readableFrameCount(from: 0) == 3)
        #expect(read(audio, from: 2, count: 3) == ([3, 0, 0], 1))
        // A block the leader began before the rewind came stays held.
        record([9, 9], at: 6, into: &audio, generation: before)
        #expect(audio.readableFrameCount(from: 3) == 0)
        // The leader rendered again from the rewind's frame: that is read, the rest is gone.
        record([7], at: 3, into: &audio)
        #expect(read(audio, from: 0, count: 8) == ([1, 2, 3, 7, 0, 0, 0, 0], 4))
        record([8], at: 4, into: &audio)
        #expect(audio.readableFrameCount(from: 0) == 5)
    }

    @Test func aBlockBegunBeforeARewindIsHeldFromTheRewindsFrameOn() {
        var audio = RenderedAudio(channelCount: 1)
        let before = audio.generation
        audio.rewind(toFrame: 2)
        record([1, 2, 3, 4], at: 0, into: &audio, generation: before)
        #expect(audio.readableFrameCount(from: 0) == 2)
        // After a pause the leader skipped (no render at the rewind's frame), it renders on later: read.
        record([5, 6], at: 10, into: &audio)
        #expect(audio.readableFrameCount(from: 10) == 2)
        #expect(audio.readableFrameCount(from: 2) == 0)
    }

    @Test func aLeaderThatResumesLaterKeepsTheOldAudioBeforeIt() {
        var audio = RenderedAudio(channelCount: 2)
        record([1, -1, 2, -2, 3, -3, 4, -4], at: 100, into: &audio)
        audio.rewind(toFrame: 101)
        // Its speakers refused up to frame 103: frames 101 and 102 play as they were sent.
        audio.confirm(before: 103)
        #expect(audio.readableFrameCount(from: 100) == 3)
        record([5, -5], at: 103, into: &audio)
        #expect(read(audio, from: 100, count: 4).samples == [1, -1, 2, -2, 3, -3, 5, -5])
    }

    @Test func theGroupClockTakesTheLargestMarginOfItsMembers() {
        let speakers = RouteClock(sampleRate: 44_100, rewindMarginFrames: 4_410)
        let receivers = RouteClock(sampleRate: 44_100, rewindMarginFrames: 17_992)
        let group = RouteClock(sampleRate: 44_100, followingMarginsOf: [speakers, receivers])
        #expect(group.rewindMarginFrames == 17_992)
        speakers.setRewindMarginFrames(44_100)
        #expect(group.rewindMarginFrames == 44_100)
    }

    @Test func membersStartAtTheLastArrivalPlusTheLargestLead() throws {
        let clock = RouteClock(sampleRate: 44_100, followingMarginsOf: [])
        let gate = RouteStartGate(memberCount: 2, clock: clock)
        let times = CollectedTimes()
        let first = Thread { times.append(gate.startTime(lead: 1.0) { false }) }
        let before = HostClock.now()
        first.start()
        HostClock.sleep(untilNanoseconds: before + 200_000_000)
        let lastArrival = HostClock.now()
        times.append(gate.startTime(lead: 0.1) { false })
        while times.values.count < 2 { HostClock.sleep(untilNanoseconds: HostClock.now() + 1_000_000) }
        let agreed = try #require(times.values.first)
        #expect(times.values.allSatisfy { $0 == agreed })
        // The last arrival came 0.2 s after the first; the time is a second (the larger lead) after it.
        #expect(agreed >= lastArrival + 1_000_000_000 && agreed < lastArrival + 1_050_000_000)
        #expect(clock.hostTime(ofFrame: 0) == agreed)
        // A member that comes after the time was agreed is given the same.
        #expect(gate.startTime(lead: 3) { false } == agreed)
    }
}

/// Host times collected from several threads.
private final class CollectedTimes: @unchecked Sendable {
    private let condition = ThreadCondition()
    private var stored: [UInt64] = []
    func append(_ value: UInt64) { condition.lock(); stored.append(value); condition.unlock() }
    var values: [UInt64] { condition.lock(); defer { condition.unlock() }; return stored }
}
