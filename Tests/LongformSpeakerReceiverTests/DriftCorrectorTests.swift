import LongformSpeakerReceiver
import Testing

/// The speaker's drift correction on its own: the deadband, the PI terms, the limit, and an output
/// whose clock runs fast brought onto the timeline.
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
}
