import LongformTestSupport
import Testing

/// How `RampAudio` reads what an output played, on values made here: a resampler's ringing at a
/// wrap is the ramp running on, and a seek is a jump whatever the ringing and silence about it.
/// (The ringing's shapes are those a speaker wrote: three frames either side of each step.)
struct RampAudioTests {
    /// The ramp's left channel from `frame`, `count` frames.
    func ramp(from frame: Int64, count: Int) -> [Int32] { (frame..<(frame + Int64(count))).map { Int32(RampAudio.value(ofFrame: $0)) } }

    /// What a sinc resampler writes for a fall from `from` to `to`: an overshoot, a middle, an undershoot.
    func ringing(from: Int32, to: Int32) -> [Int32] {
        let fall = Double(from - to)
        return [from + Int32(0.043 * fall), to + Int32(0.66 * fall), to - Int32(0.073 * fall)]
    }

    /// A frame where the ramp holds `value` (frame 200,000 or later, so a seek back lands before it).
    func frame(holding value: Int32) -> Int64 { Int64(value) + 16_384 * 13 }

    @Test func aWrapThatRingsIsTheRampRunningOn() {
        // Frames 16,382 to 16,384 rung over by the wrap's fall, as a speaker wrote them.
        let values = ramp(from: 10_000, count: 6_382) + [16_493, 15_015, -781] + ramp(from: 16_385, count: 10_000)
        let played = RampAudio.played(left: values).splitAtJumps()
        #expect(played.pieces.count == 1 && played.pieces[0].isContinuous(tolerance: 2), "\(played)")
    }

    @Test(arguments: [Int32(16_200), 100, 9_000])
    func aSeekWithoutASilenceIsAJumpWhateverItsRingingReaches(from value: Int32) {
        // Back to frame 22,050 (5,666): from 16,200 the overshoot passes 16,320, and from 100 the
        // undershoot passes below 0, where a wrap's values are.
        let before = ramp(from: frame(holding: value) - 5_000, count: 5_000)
        let values = before + ringing(from: before.last!, to: 5_666) + ramp(from: 22_050, count: 20_000)
        let played = RampAudio.played(left: values).splitAtJumps()
        #expect(played.pieces.count == 2 && played.pieces.allSatisfy { $0.isContinuous(tolerance: 2) }, "\(played)")
        #expect(played.silenceLengths.first.map { $0 <= 2 * RampAudio.ringingFrames } == true, "\(played)")
        #expect(played.pieces.last.map { RampAudio.distance(from: 5_666, to: $0.first, frames: RampAudio.ringingFrames) <= 2 } == true, "\(played)")
    }

    @Test(arguments: [1, 20, 63])
    func aSeekAfterASilenceTooShortToSplitOnIsAJump(silence: Int) {
        // Under 64 zeros is not a silence of `played`; the ringing into and out of it touches 0.
        let before = ramp(from: frame(holding: 12_446) - 5_000, count: 5_000)
        let values = before + ringing(from: 12_446, to: 0) + Array(repeating: 0, count: silence) + ringing(from: 0, to: 5_666)
            + ramp(from: 22_050, count: 20_000)
        let played = RampAudio.played(left: values).splitAtJumps()
        #expect(played.pieces.count == 2 && played.pieces.allSatisfy { $0.isContinuous(tolerance: 2) }, "\(played)")
        #expect(played.silenceLengths.first.map { (silence...(silence + 4 * RampAudio.ringingFrames)).contains($0) } == true, "\(played)")
        #expect(played.pieces.first.map { $0.count >= 5_000 - 1 } == true, "\(played)")
    }

    @Test func aSeekForwardWithinTheSameLapIsAJump() {
        // 2,000 frames on, less than a lap: the step is positive but far over 2.
        let values = ramp(from: 30_000, count: 5_000) + ramp(from: 37_000, count: 5_000)
        let played = RampAudio.played(left: values).splitAtJumps()
        #expect(played.pieces.count == 2 && played.silenceLengths == [0], "\(played)")
    }
}
