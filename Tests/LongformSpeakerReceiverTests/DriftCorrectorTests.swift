import Foundation
import LongformSpeakerReceiver
import Testing

/// The speaker's drift correction on its own: the deadband, the PI terms, the limit, an output
/// whose clock runs fast brought onto the timeline, and a bit-exact output's whole frames.
@Suite struct DriftCorrectorTests {
    static let rate = 44_100.0

    @Test func anErrorInsideTheDeadbandStartsNoCorrection() {
        var drift = DriftCorrector()
        drift.update(error: 0.04, blockSeconds: 0.1, sampleRate: Self.rate)
        #expect(drift.rateCorrection == 0 && drift.integral == 0)
    }

    @Test func anErrorOutsideItSetsTheProportionalAndIntegralTerms() {
        var drift = DriftCorrector()
        drift.update(error: 1, blockSeconds: 0.1, sampleRate: Self.rate)
        #expect(drift.integral == 0.1)
        #expect(abs(drift.rateCorrection - (1 + 0.1 * 0.25) / Self.rate) < 1e-12)
        // Back inside the deadband, a correction under way keeps its integral part.
        drift.update(error: 0.01, blockSeconds: 0.1, sampleRate: Self.rate)
        #expect(drift.integral == 0.1)
        #expect(abs(drift.rateCorrection - 0.1 * 0.25 / Self.rate) < 1e-12)
        drift.reset()
        #expect(drift == DriftCorrector())
    }

    @Test func theCorrectionNeverPassesAThousandPartsPerMillion() {
        var drift = DriftCorrector()
        drift.update(error: 1_000, blockSeconds: 0.1, sampleRate: Self.rate)
        #expect(drift.rateCorrection == DriftCorrector.maximumRateCorrection)
        drift.update(error: -100_000, blockSeconds: 1, sampleRate: Self.rate)
        #expect(drift.rateCorrection == -DriftCorrector.maximumRateCorrection)
    }

    /// An output whose clock runs 100 ppm fast renders 100 ppm more frames than the timeline
    /// advances: within a minute the correction reads that much slower and the error is under a frame.
    @Test func anOutputRunningFastIsBroughtOntoTheTimeline() {
        var drift = DriftCorrector()
        let ppm = 100e-6, blockFrames = 4_410.0
        var position = 0.0, target = 0.0, worstLateError = 0.0
        for block in 0..<600 {
            let error = target - position
            if block >= 300 { worstLateError = max(worstLateError, abs(error)) }
            drift.update(error: error, blockSeconds: blockFrames / Self.rate, sampleRate: Self.rate)
            position += blockFrames * (1 + drift.rateCorrection)
            // The block lasts its frames on the output's clock, which is fast: less on the timeline.
            target += blockFrames / (1 + ppm)
        }
        #expect(abs(drift.rateCorrection + ppm) < 2e-6, "\(drift.rateCorrection * 1e6) ppm")
        #expect(worstLateError < 1, "\(worstLateError) frames")
    }

    @Test func aBitExactOutputSlipsNothingForAnEstimateWanderingWithinItsUncertainty() {
        // As a loaded machine's estimate: within ±1.2 frames (26 µs) of where it started, its
        // uncertainty 1.3 frames; before, a frame's error slipped one.
        var drift = DriftCorrector()
        var slipped = 0
        for block in 0..<3_000 {
            let error = 1.2 * sin(Double(block) * 0.37) * cos(Double(block) * 0.051)
            slipped += abs(drift.wholeFrames(forError: error, uncertainty: 1.3, blockFrameCount: 441))
        }
        #expect(slipped == 0 && !drift.isSlipping)
    }

    @Test func aBitExactOutputSurelyAFrameOffSlipsBackToWithinHalfAFrame() {
        var drift = DriftCorrector()
        #expect(drift.wholeFrames(forError: 2.4, uncertainty: 1.5, blockFrameCount: 441) == 0)
        // Beyond a frame plus the uncertainty: a frame a block (441 frames: 1,000 ppm is under one).
        #expect(drift.wholeFrames(forError: 2.6, uncertainty: 1.5, blockFrameCount: 441) == 1 && drift.isSlipping)
        #expect(drift.wholeFrames(forError: 1.6, uncertainty: 1.5, blockFrameCount: 441) == 1)
        #expect(drift.wholeFrames(forError: 0.6, uncertainty: 1.5, blockFrameCount: 441) == 1)
        #expect(drift.wholeFrames(forError: -0.4, uncertainty: 1.5, blockFrameCount: 441) == 0 && !drift.isSlipping)
        // Behind: frames repeated; 4,410-frame blocks take up to 5 a block (1,000 ppm: 4.41).
        #expect(drift.wholeFrames(forError: -7.2, uncertainty: 0, blockFrameCount: 4_410) == -5)
        #expect(drift.wholeFrames(forError: -2.2, uncertainty: 0, blockFrameCount: 4_410) == -2)
        drift.reset()
        #expect(drift == DriftCorrector())
    }

    /// An output 1,000 ppm fast (the most a speaker corrects) with a third of a frame of
    /// uncertainty: it keeps within a frame, the uncertainty and a block's drift of the timeline,
    /// with 10 ms blocks and with the WAV route's 50 ms.
    @Test(arguments: [441, 2_205])
    func aBitExactOutputKeepsUpWithTheLargestDrift(blockFrameCount: Int) {
        var drift = DriftCorrector()
        var position = 0.0, target = 0.0, worst = 0.0
        for _ in 0..<2_000 {
            let error = target - position
            worst = max(worst, abs(error))
            position += Double(drift.wholeFrames(forError: error, uncertainty: 0.33, blockFrameCount: blockFrameCount) + blockFrameCount)
            target += Double(blockFrameCount) / 1.001
        }
        #expect(worst < 1.33 + Double(blockFrameCount) * 0.001 + 0.01, "\(worst) frames")
    }
}
