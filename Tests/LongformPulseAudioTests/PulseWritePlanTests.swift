@testable import LongformPulseAudio
import Testing

/// The PulseAudio route's write rules, driven event by event with no server: what it writes, from
/// which frame, replayed or rendered, and what it learns from a flush.
@Suite struct PulseWritePlanTests {
    /// A route at 1,000 frames a second, mono: a full write is 1,000 frames, the first after a flush
    /// 100, the low-water mark 100, the safety 1, the largest margin learnt 100; the server holds 2 s.
    static let sizes = PulseWritePlan.Sizes(sampleRate: 1000, channelCount: 1, writeDuration: 1, bufferDuration: 2)

    /// A plan and what a server would hold from it: each frame's last written sample. Rendered frames
    /// are marked `pass * 100_000 + frame`, so a frame written again as it was keeps its pass.
    struct Server {
        var plan = PulseWritePlan(sizes: PulseWritePlanTests.sizes)
        var samples: [Int64: Float] = [:]
        /// The pass rendering marks its frames with; a test raises it when the renderer's queue changes.
        var pass: Float = 1

        static func mark(_ frame: Int64, pass: Float) -> Float { pass * 100_000 + Float(frame) }

        /// Room for `writable` frames with `heard` heard; carries out a write and returns it.
        mutating func room(_ writable: Int, heard: Int64, queued: Int64? = nil) -> PulseWritePlan.WriteAction {
            let action = plan.roomToWrite(writableFrames: writable, capacityFrames: 2100, heardFrame: heard) { _ in queued }
            guard case .write(let write) = action else { return action }
            var buffer = [Float](repeating: .nan, count: write.frameCount)
            let pass = pass
            buffer.withUnsafeMutableBufferPointer { pointer in
                plan.fill(pointer, for: write) { samples, count, frame in
                    for index in 0..<count { samples[index] = Self.mark(frame + Int64(index), pass: pass) }
                }
            }
            for (index, sample) in buffer.enumerated() { samples[write.startFrame + Int64(index)] = sample }
            plan.wrote(write)
            return action
        }

        /// A rewind to `target` with `heard` heard and the server about to play `resume`: a
        /// flush sent with the write that goes with it.
        mutating func rewind(to target: Int64, resume: Int64, heard: Int64?, margin: Int64? = 20,
                             queued: Int64? = nil) -> (outcome: PulseWritePlan.FlushOutcome, write: PulseWritePlan.WriteAction)? {
            guard plan.rewindRequested(toFrame: target) == .flush else { return nil }
            let outcome = plan.flushing(resumingAt: resume, rewindTarget: target, heardFrame: heard, rewindMarginFrames: margin)
            samples = samples.filter { $0.key < resume }
            return (outcome, room(2100, heard: heard ?? resume, queued: queued))
        }
    }

    static func write(_ start: Int64, _ count: Int, replayed: Int = 0) -> PulseWritePlan.WriteAction {
        .write(.init(startFrame: start, frameCount: count, replayedFrameCount: replayed))
    }

    /// The first write is short and taken at any room; after it, the route waits for a full write's room.
    @Test func theFirstWriteIsShortThenWritesAreFull() {
        var server = Server()
        #expect(server.plan.minimumWritableFrames == 1)
        #expect(server.room(2000, heard: 0) == Self.write(0, 100))
        #expect(server.plan.minimumWritableFrames == 1000)
        #expect(server.room(1900, heard: 0) == Self.write(100, 1900))
        #expect(server.plan.frame == 2000)
    }

    /// With little queued, it writes up to the low-water mark ahead of the frame heard, then waits
    /// until half of that is left.
    @Test func withLittleQueuedItKeepsTheLowWaterMarkAndWaits() {
        var server = Server()
        #expect(server.room(2000, heard: 0, queued: 30) == Self.write(0, 100))
        // 100 written, 40 heard: 60 ahead; 30 queued, and 40 more needed for the mark.
        #expect(server.room(1000, heard: 40, queued: 30) == Self.write(100, 40))
        #expect(server.room(1000, heard: 40, queued: 0) == .wait(untilFrameHeard: 90))
    }

    /// A rewind to frames not written yet flushes nothing.
    @Test func aRewindPastWhatWasWrittenFlushesNothing() {
        var server = Server()
        _ = server.room(2000, heard: 0)
        #expect(server.plan.rewindRequested(toFrame: 100) == .writeOn)
        #expect(server.plan.rewindRequested(toFrame: 99) == .flush)
    }

    /// The server resumes before the rewind's target: the frames in between are written again as
    /// they were (the renderer's queue may hold other audio there now), the rest rendered anew, a
    /// first write's worth; then writes are full again.
    @Test func aFlushReplaysWhatComesBeforeTheTargetAsItWas() throws {
        var server = Server()
        _ = server.room(2000, heard: 0)
        _ = server.room(1900, heard: 0)
        server.pass = 2
        let flushed = server.rewind(to: 530, resume: 500, heard: nil)
        let (outcome, write) = try #require(flushed)
        #expect(outcome == .init(rewindMarginFrames: nil, resumedAfterRewindTo: nil))
        #expect(write == Self.write(500, 130, replayed: 30))
        for frame in Int64(500)..<530 { #expect(server.samples[frame] == Server.mark(frame, pass: 1)) }
        for frame in Int64(530)..<630 { #expect(server.samples[frame] == Server.mark(frame, pass: 2)) }
        #expect(server.plan.minimumWritableFrames == 1000)
        #expect(server.room(1400, heard: 490) == Self.write(630, 1400))
    }

    /// With the clock running, the write that goes with a flush starts two safety margins behind
    /// the frame heard, behind the server's read index, with what was written there.
    @Test func theWriteWithAFlushStartsBehindTheFrameHeard() throws {
        var server = Server()
        _ = server.room(2000, heard: 0)
        _ = server.room(1900, heard: 0)
        server.pass = 2
        let flushed = server.rewind(to: 600, resume: 510, heard: 500)
        let (_, write) = try #require(flushed)
        #expect(write == Self.write(498, 202, replayed: 102))
        for frame in Int64(498)..<600 { #expect(server.samples[frame] == Server.mark(frame, pass: 1)) }
        for frame in Int64(600)..<700 { #expect(server.samples[frame] == Server.mark(frame, pass: 2)) }
    }

    /// With little queued past the target, the write that goes with a flush holds the replay and
    /// the low-water mark's worth past the frame heard.
    @Test func aFlushWithLittleQueuedKeepsTheLowWaterMark() throws {
        var server = Server()
        _ = server.room(2000, heard: 0)
        _ = server.room(1900, heard: 0)
        let flushed = server.rewind(to: 530, resume: 500, heard: 480, queued: 0)
        let (_, write) = try #require(flushed)
        // 100 past the frame heard: to 580.
        #expect(write == Self.write(478, 102, replayed: 52))
    }

    /// Where the server reads teaches the margin: a longer reach is taken at once, a shorter one
    /// a quarter of the way, and one beyond reason not at all.
    @Test func eachFlushTeachesTheRewindMargin() throws {
        var server = Server()
        _ = server.room(2000, heard: 0)
        _ = server.room(1900, heard: 0)
        // Reach: 530 - 500 + 1 = 31, above the margin of 20.
        let first = server.rewind(to: 900, resume: 530, heard: 500)
        #expect(try #require(first).outcome.rewindMarginFrames == 31)
        _ = server.room(1500, heard: 500)
        // Reach 11, below 31: (3 * 31 + 11) / 4 = 26.
        let second = server.rewind(to: 560, resume: 520, heard: 510, margin: 31)
        #expect(try #require(second).outcome.rewindMarginFrames == 26)
        _ = server.room(1500, heard: 500)
        // Reach 201: the server is still starting; nothing is learnt.
        let third = server.rewind(to: 800, resume: 720, heard: 520, margin: 26)
        #expect(try #require(third).outcome.rewindMarginFrames == nil)
    }

    /// A server that reads past the rewind's target says so, for the timeline to follow, and what
    /// it held up to there is written again as it was.
    @Test func aResumePastTheTargetIsReported() throws {
        var server = Server()
        _ = server.room(2000, heard: 0)
        _ = server.room(1900, heard: 0)
        server.pass = 2
        let flushed = server.rewind(to: 500, resume: 530, heard: 520)
        let (outcome, write) = try #require(flushed)
        #expect(outcome.resumedAfterRewindTo == 500)
        #expect(write == Self.write(518, 112, replayed: 12))
        #expect(server.samples[529] == Server.mark(529, pass: 1))
        #expect(server.samples[530] == Server.mark(530, pass: 2))
    }

    /// A stream opened again after the old one failed: a route that keeps every frame writes what
    /// it had written from the frame the old one stopped at, as it was, then renders on; a later
    /// flush never writes before the new stream's first frame, though the history holds it.
    @Test func aStreamOpenedAgainGoesOnFromWhereTheOldOneStoppedAsItWas() throws {
        var server = Server()
        _ = server.room(2000, heard: 0)
        _ = server.room(1900, heard: 0)
        server.pass = 2
        server.samples = [:] // the new stream holds nothing
        server.plan.streamReopened(resumingAt: 500, replaysWhatWasWritten: true)
        #expect(server.plan.minimumWritableFrames == 1)
        #expect(server.room(2100, heard: 500) == Self.write(500, 1600, replayed: 1500))
        for frame in Int64(500)..<2000 { #expect(server.samples[frame] == Server.mark(frame, pass: 1)) }
        for frame in Int64(2000)..<2100 { #expect(server.samples[frame] == Server.mark(frame, pass: 2)) }
        // Heard 500, the write with a flush would start 2 frames behind it: before the stream's first.
        let flushed = server.rewind(to: 700, resume: 600, heard: 500)
        #expect(try #require(flushed).write == Self.write(600, 200, replayed: 100))
    }

    /// A route that keeps time renders a stream opened again anew from the frame due when it plays:
    /// what it had written was placed by the old stream's clock.
    @Test func aStreamOpenedAgainThatKeepsTimeRendersAnew() {
        var server = Server()
        _ = server.room(2000, heard: 0)
        _ = server.room(1900, heard: 0)
        server.pass = 2
        server.plan.streamReopened(resumingAt: 800, replaysWhatWasWritten: false)
        #expect(server.room(2100, heard: 800) == Self.write(800, 100))
        #expect(server.samples[800] == Server.mark(800, pass: 2))
    }
}
