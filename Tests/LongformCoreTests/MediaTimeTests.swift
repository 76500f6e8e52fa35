import LongformCore
import Testing

/// MediaTime against results computed by hand with CMTime's rules.
@Suite struct MediaTimeTests {
    @Test func additionUsesTheLeastCommonMultipleOfTimescales() {
        let sum = MediaTime(value: 1, timescale: 2) + MediaTime(value: 1, timescale: 3)
        #expect(sum.value == 5 && sum.timescale == 6 && !sum.hasBeenRounded)
        // One frame at 44.1 kHz plus one at 48 kHz: LCM 7 056 000 = 160 + 147 units.
        let frames = MediaTime(value: 1, timescale: 44_100) + MediaTime(value: 1, timescale: 48_000)
        #expect(frames.value == 307 && frames.timescale == 7_056_000)
        let same = MediaTime(value: 3, timescale: 10) + MediaTime(value: 4, timescale: 10)
        #expect(same.value == 7 && same.timescale == 10)
        let difference = MediaTime(value: 1, timescale: 2) - MediaTime(value: 1, timescale: 3)
        #expect(difference.value == 1 && difference.timescale == 6)
    }

    @Test func aTooLargeLeastCommonMultipleFallsBackToTheLargerTimescaleAndRounds() {
        // 999 999 937 and 999 999 929 are prime: their LCM exceeds the maximum timescale.
        let sum = MediaTime(value: 1, timescale: 999_999_937) + MediaTime(value: 1, timescale: 999_999_929)
        #expect(sum.timescale == 999_999_937)
        #expect(sum.value == 2) // 1 + 0.99999999 rounded half away from zero
        #expect(sum.hasBeenRounded)
    }

    @Test func overflowHalvesTheTimescaleAndRounds() {
        let large = MediaTime(value: 6_000_000_000_000_000_000, timescale: 2) // 3e18 s
        let sum = large + large
        #expect(sum.timescale == 1 && sum.value == 6_000_000_000_000_000_000 && sum.hasBeenRounded)
        let huge = MediaTime(value: .max, timescale: 1) + MediaTime(value: .max, timescale: 1)
        #expect(huge.isPositiveInfinity)
        let hugeNegative = MediaTime(value: .min + 1, timescale: 1) - MediaTime(value: .max, timescale: 1)
        #expect(hugeNegative.isNegativeInfinity)
    }

    @Test func conversionRoundsByTheRequestedMethod() {
        let third = MediaTime(value: 1, timescale: 3)
        #expect(third.convertScale(10).value == 3)
        #expect(third.convertScale(10).hasBeenRounded)
        #expect(third.convertScale(10, method: .roundTowardZero).value == 3)
        #expect(third.convertScale(10, method: .roundAwayFromZero).value == 4)
        #expect(third.convertScale(10, method: .quickTime).value == 4) // to a larger timescale: away from zero
        let negativeThird = MediaTime(value: -1, timescale: 3)
        #expect(negativeThird.convertScale(10).value == -3)
        #expect(negativeThird.convertScale(10, method: .roundTowardPositiveInfinity).value == -3)
        #expect(negativeThird.convertScale(10, method: .roundTowardNegativeInfinity).value == -4)
        // Halves round away from zero by default.
        #expect(MediaTime(value: 1, timescale: 4).convertScale(2).value == 1)
        #expect(MediaTime(value: -1, timescale: 4).convertScale(2).value == -1)
        // QuickTime toward zero to a smaller timescale, but never to zero.
        #expect(MediaTime(value: 15, timescale: 10).convertScale(1, method: .quickTime).value == 1)
        #expect(MediaTime(value: 1, timescale: 100).convertScale(10, method: .quickTime).value == 1)
        // Exact conversions are not flagged.
        let exact = MediaTime(value: 44_100, timescale: 44_100).convertScale(48_000)
        #expect(exact.value == 48_000 && !exact.hasBeenRounded)
    }

    @Test func nonNumericValuesPropagate() {
        let one = MediaTime(value: 1, timescale: 1)
        #expect(!(MediaTime.invalid + one).isValid)
        #expect((MediaTime.positiveInfinity + one).isPositiveInfinity)
        #expect((one - MediaTime.positiveInfinity).isNegativeInfinity)
        #expect(!(MediaTime.positiveInfinity + MediaTime.negativeInfinity).isValid)
        #expect(!(MediaTime.positiveInfinity - MediaTime.positiveInfinity).isValid)
        #expect((MediaTime.indefinite + one).isIndefinite)
        #expect(MediaTime.invalid.seconds.isNaN)
        #expect(MediaTime.positiveInfinity.seconds == .infinity)
        #expect(!MediaTime(value: 1, timescale: 0).isValid)
    }

    @Test func comparisonOrdersLikeCMTimeCompare() {
        #expect(MediaTime(value: 1, timescale: 2) == MediaTime(value: 2, timescale: 4))
        #expect(MediaTime(value: 1, timescale: 3) < MediaTime(value: 34, timescale: 100))
        #expect(MediaTime.negativeInfinity < MediaTime(value: .min, timescale: 1))
        #expect(MediaTime(value: .max, timescale: 1) < MediaTime.positiveInfinity)
        #expect(MediaTime.positiveInfinity < MediaTime.indefinite)
        #expect(MediaTime.indefinite < MediaTime.invalid)
        #expect(MediaTime.invalid == MediaTime.invalid)
        #expect(Set([MediaTime(value: 1, timescale: 2), MediaTime(value: 50, timescale: 100)]).count == 1)
        // Huge values compare without overflowing.
        #expect(MediaTime(value: .max, timescale: 1_000_000_000) > MediaTime(value: .max - 1, timescale: 1_000_000_000))
    }

    @Test func secondsConvertBothWays() {
        #expect(MediaTime(value: 1, timescale: 4).seconds == 0.25)
        let tenth = MediaTime(seconds: 0.1, preferredTimescale: 1000)
        #expect(tenth.value == 100 && tenth.timescale == 1000 && !tenth.hasBeenRounded)
        let third = MediaTime(seconds: 1.0 / 3.0, preferredTimescale: 1000)
        #expect(third.value == 333 && third.hasBeenRounded)
        #expect(!MediaTime(seconds: .nan, preferredTimescale: 1).isValid)
        #expect(MediaTime(seconds: .infinity, preferredTimescale: 1).isPositiveInfinity)
    }

    @Test func multiplicationByRatioStaysExact() {
        let time = MediaTime(value: 3, timescale: 10).multiplied(byRatio: 2, dividedBy: 3)
        #expect(time.value == 2 && time.timescale == 10 && !time.hasBeenRounded)
        let rounded = MediaTime(value: 1, timescale: 10).multiplied(byRatio: 1, dividedBy: 3)
        #expect(rounded.value == 0 && rounded.hasBeenRounded)
    }
}
