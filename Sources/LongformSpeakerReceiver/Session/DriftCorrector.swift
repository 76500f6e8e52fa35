/// How much faster or slower than the stream's rate a speaker's output reads its buffer, so that
/// it stays on the anchor's timeline although its clock and the network's drift apart: a PI
/// controller on the error between where the output reads and where the timeline says it should,
/// critically damped with a time constant of about 2 s; or, for a bit-exact output, whole frames
/// skipped or repeated (`wholeFrames(forError:uncertainty:blockFrameCount:)`). A value type: the
/// session keeps one, and a rendered block keeps a copy to go back to.
public struct DriftCorrector: Sendable, Equatable {
    /// Frames within a twentieth of a frame (1 µs) of the anchor's timeline are in step: no
    /// correction is started for them (a correction resamples), but one under way keeps its
    /// integral part. Not half a frame: each speaker of a pair then sat anywhere within ±11 µs of
    /// the timeline, and the pair wandered up to 25 µs apart (commit 49ac25c).
    public static let deadband = 0.05
    /// The largest correction: 1,000 ppm, far beyond any crystal's drift, and inaudible.
    public static let maximumRateCorrection = 0.001

    /// The output's read rate over the stream's rate, minus 1: the correction now.
    public private(set) var rateCorrection: Double = 0
    /// The integral of the error (frames × seconds).
    public private(set) var integral: Double = 0
    /// Whether a bit-exact output is skipping or repeating frames back to the timeline.
    public private(set) var isSlipping = false

    /// No correction.
    public init() {}

    /// Takes the error (frames the timeline is ahead of the output's position) at the start of a
    /// block of `blockSeconds` at `sampleRate`, and sets the correction for that block.
    public mutating func update(error: Double, blockSeconds: Double, sampleRate: Double) {
        let isOutside = abs(error) > Self.deadband
        if isOutside { integral += error * blockSeconds }
        let proportional = isOutside ? error / sampleRate : 0
        rateCorrection = min(max(proportional + integral * 0.25 / sampleRate, -Self.maximumRateCorrection), Self.maximumRateCorrection)
    }

    /// For a bit-exact output, which keeps to the timeline by whole frames instead of resampling:
    /// the frames to skip (positive) or repeat (negative) at the start of a block of
    /// `blockFrameCount` whose timeline is `error` frames ahead of where it reads, by a clock
    /// estimate within `uncertainty` frames of the truth. It starts only once the output is surely
    /// a frame off (the error beyond a frame plus the uncertainty: an estimate that wanders within
    /// it says nothing of drift, and each slip is heard) and goes on until within half a frame, at
    /// most 1,000 ppm of the block, rounded up (a frame a block of 441).
    public mutating func wholeFrames(forError error: Double, uncertainty: Double, blockFrameCount: Int) -> Int {
        let size = abs(error)
        if !isSlipping && size < 1 + uncertainty { return 0 }
        isSlipping = size > 0.5
        guard isSlipping else { return 0 }
        let limit = max(1, Int((Double(blockFrameCount) * Self.maximumRateCorrection).rounded(.up)))
        let frames = min(max(1, Int(size)), limit)
        return error > 0 ? frames : -frames
    }

    /// Forgets the correction: the output jumped to the timeline (a start, a gap, a new anchor).
    public mutating func reset() {
        self = DriftCorrector()
    }
}
