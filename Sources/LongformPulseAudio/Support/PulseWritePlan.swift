/// The PulseAudio route's rules for what it writes next, as a value type: the low-water mark, the
/// write after a flush (from behind the frame heard, the frames before the rewind's target
/// written again as they were, from its `FrameHistory`), the short first write after it, and the
/// rewind margin learnt from each flush.
///
/// The route's thread is its driver: it waits until the server can take `minimumWritableFrames`,
/// hands each event here (a rewind asked for, a flush to send, room to write, a write done) and
/// carries out what comes back. Frames are route frames; the server holds every frame
/// before `frame` that it has not played.
struct PulseWritePlan {
    /// The route's sizes, in frames at its rate.
    struct Sizes {
        /// Frames per full write: the server asks again when that much has played.
        var writeFrames: Int
        /// What the first write after a flush renders, short so that it goes with the flush at once
        /// (the rest follows at once).
        var firstWriteFrames: Int
        /// Written ahead of the frame heard whether or not audio is queued for it, so that the server
        /// does not run dry while the renderer is still being filled.
        var lowWaterFrames: Int64
        /// Added to a learnt margin, and kept twice between the first write after a flush and the frame heard.
        var safetyFrames: Int64
        /// A margin learnt beyond this (a server still starting) is not taken.
        var maximumMarginFrames: Int64
        /// Frames the history keeps: more than the server holds.
        var historyFrames: Int
        /// Interleaved samples per frame.
        var channelCount: Int

        /// The sizes of a route at `sampleRate` writing `writeDuration` seconds at a time and holding
        /// `bufferDuration` seconds in the server.
        init(sampleRate: Int, channelCount: Int, writeDuration: Double, bufferDuration: Double) {
            writeFrames = Int(Double(sampleRate) * writeDuration)
            // A tenth of a second, not less: the server runs dry if rendering the rest takes longer
            // than the first write lasts, and under load that took over 10 ms.
            firstWriteFrames = sampleRate / 10
            lowWaterFrames = Int64(sampleRate / 10)
            safetyFrames = Int64(sampleRate / 1000)
            maximumMarginFrames = Int64(sampleRate / 10)
            // The server holds no more than its buffer; the second more is slack.
            historyFrames = Int(Double(sampleRate) * (bufferDuration + 1))
            self.channelCount = channelCount
        }
    }

    /// A write to carry out: `frameCount` frames from `startFrame`, the first `replayedFrameCount`
    /// of them from the history.
    struct Write: Equatable {
        /// The first frame written.
        var startFrame: Int64
        /// Frames written.
        var frameCount: Int
        /// Of those, how many are written again as they were before a flush.
        var replayedFrameCount: Int
    }

    /// What to do on room to write.
    enum WriteAction: Equatable {
        /// Render and send this write.
        case write(Write)
        /// Enough is written: look again when the frame heard reaches this one, or on a rewind.
        case wait(untilFrameHeard: Int64)
    }

    /// What to do on a rewind.
    enum RewindAction: Equatable {
        /// Flush the server's stream and learn where it resumes, or (a stream that plays through
        /// flushes) where it reads; hand that to `flushing`, then send the write `roomToWrite`
        /// gives next: after the flush, or with it.
        case flush
        /// Nothing written is taken back: write on.
        case writeOn
    }

    /// What a flush changes outside the plan.
    struct FlushOutcome: Equatable {
        /// The rewind margin learnt from it, if one was.
        var rewindMarginFrames: Int64?
        /// The rewind's target when the server resumes past it (the frames between are heard as they were).
        var resumedAfterRewindTo: Int64?
    }

    /// The sizes it plans with.
    let sizes: Sizes
    /// The next frame to write.
    private(set) var frame: Int64 = 0
    /// Frames before this one are written again from the history rather than rendered.
    private(set) var replayEnd: Int64 = 0
    /// Whether the next write is the first after a flush (or the start): short, and sent at any room.
    private(set) var isRefilling = true
    /// What was written, by route frame, for the frames a flush resumes at.
    private(set) var history: FrameHistory
    /// The stream's first frame: nothing is written before it (a stream opened again starts at a
    /// frame past the history's start).
    private(set) var streamStartFrame: Int64 = 0

    /// A plan for a stream that has had nothing written.
    init(sizes: Sizes) {
        self.sizes = sizes
        history = FrameHistory(capacityFrames: sizes.historyFrames, channelCount: sizes.channelCount)
    }

    /// The room to wait for before the next write: any after a flush, else a full write's.
    var minimumWritableFrames: Int { isRefilling ? 1 : sizes.writeFrames }

    /// A rewind to `target` was asked for: a flush if the server holds frames from `target` on;
    /// else a replay pending past `target` is cut there, since those frames render anew.
    mutating func rewindRequested(toFrame target: Int64) -> RewindAction {
        guard target < frame else {
            replayEnd = min(replayEnd, target)
            return .writeOn
        }
        return .flush
    }

    /// A flush for a rewind to `target`: the server resumes at `resume` (its read index, at the
    /// flush or asked for just before it), and the route's clock hears `heardFrame` (nil while it
    /// is not running), its margin `rewindMarginFrames`. The next write follows the flush, or goes
    /// with it on a stream that plays through flushes, so that the server never plays on empty
    /// between the two (it would play silence at the time of what it held). It starts a little
    /// behind the frame heard, with what was written there up to `resume`, or to `target` if that
    /// is later: behind the server's read index, so that a sink that can rewind takes back what it
    /// rendered ahead and renders again at once (else the change waits for its next block); the
    /// audio is what it had, so a sink that cannot rewind loses nothing.
    mutating func flushing(resumingAt resume: Int64, rewindTarget target: Int64, heardFrame: Int64?, rewindMarginFrames: Int64?) -> FlushOutcome {
        var learntMargin: Int64?
        if let heardFrame {
            // The server cannot take back what its sink already has: learn how far ahead of the
            // frame heard that reaches, so that the next change is placed past it.
            let reach = resume - heardFrame + sizes.safetyFrames
            let margin = rewindMarginFrames ?? reach
            if reach <= sizes.maximumMarginFrames { learntMargin = reach > margin ? reach : (3 * margin + reach) / 4 }
        }
        replayEnd = resume < target && history.holds(resume..<target) ? target : resume
        frame = resume
        if let heardFrame {
            let behind = heardFrame - 2 * sizes.safetyFrames
            // (`replayEnd` is already at or past `resume`: from `behind` to there is all a replay.)
            if behind < resume && behind >= streamStartFrame && history.holds(behind..<resume) { frame = behind }
        }
        isRefilling = true
        return FlushOutcome(rewindMarginFrames: learntMargin, resumedAfterRewindTo: resume > target ? target : nil)
    }

    /// The stream failed and a new one starts at `resume`: the frame the old one was about to play
    /// (a route that keeps every frame) or the one due when the new one starts (a route that keeps
    /// time). What was written from there on is written again from the history, as after a flush,
    /// if `replaysWhatWasWritten`; else it renders anew.
    mutating func streamReopened(resumingAt resume: Int64, replaysWhatWasWritten: Bool) {
        replayEnd = replaysWhatWasWritten && resume < frame && history.holds(resume..<frame) ? frame : resume
        frame = resume
        streamStartFrame = resume
        isRefilling = true
    }

    /// The server has room for `writableFrames` (the route's buffer for `capacityFrames`);
    /// `heardFrame` is the frame heard now and `queuedFrameCount` what the renderer has queued from
    /// a route frame on (nil: as much as asked for).
    mutating func roomToWrite(writableFrames: Int, capacityFrames: Int, heardFrame: Int64,
                              queuedFrameCount: (_ fromRouteFrame: Int64) -> Int64?) -> WriteAction {
        var count = min(writableFrames, capacityFrames)
        // Frames before a rewind's target first, from what was written; then what the renderer has
        // queued (after a flush, a short stretch only, so that the flush waits for little).
        let replayedFrames = Int(max(0, min(replayEnd - frame, Int64(count))))
        if isRefilling {
            count = min(count, replayedFrames + sizes.firstWriteFrames)
            isRefilling = false
        }
        if let queued = queuedFrameCount(frame + Int64(replayedFrames)) {
            let needed = sizes.lowWaterFrames - (frame - heardFrame)
            count = min(count, Int(max(Int64(replayedFrames) + queued, needed, 0)))
        }
        // Enough is written and the rest is still being enqueued (or nothing plays): look again
        // when the server is down to half the low-water mark. Half, not all of it: paused or
        // stopped, the route wakes 20 times a second instead of 100.
        guard count > 0 else { return .wait(untilFrameHeard: frame - sizes.lowWaterFrames / 2) }
        return .write(Write(startFrame: frame, frameCount: count, replayedFrameCount: replayedFrames))
    }

    /// Fills `samples` (interleaved, `write.frameCount` frames) for `write`: the replayed frames
    /// from the history, the rest from `render(samples, frameCount, routeFrame)`, which is recorded.
    mutating func fill(_ samples: UnsafeMutableBufferPointer<Float>, for write: Write,
                       render: (UnsafeMutableBufferPointer<Float>, _ frameCount: Int, _ atRouteFrame: Int64) -> Void) {
        let channels = sizes.channelCount
        let replayed = history.copy(from: write.startFrame, count: write.replayedFrameCount, into: samples) ? write.replayedFrameCount : 0
        guard replayed < write.frameCount else { return }
        let rendered = UnsafeMutableBufferPointer(rebasing: samples[(replayed * channels)..<(write.frameCount * channels)])
        render(rendered, write.frameCount - replayed, write.startFrame + Int64(replayed))
        // Only what was rendered: replayed frames are in the history already, and recording them
        // would drop the rest of the replay from it.
        history.record(UnsafeBufferPointer(rendered), at: write.startFrame + Int64(replayed))
    }

    /// The server took `write`.
    mutating func wrote(_ write: Write) {
        frame = write.startFrame + Int64(write.frameCount)
    }
}
