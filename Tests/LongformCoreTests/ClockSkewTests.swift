import LongformCore
import Testing

/// The skew a test gives a process's host clock.
struct ClockSkewTests {
    @Test func aFastClockGainsItsRateAndAgreesAtItsOrigin() {
        let skew = ClockSkew(origin: 5_000_000_000, rate: 200e-6)
        #expect(skew.reading(ofRaw: 5_000_000_000) == 5_000_000_000)
        // A minute later by the system's clock: 12 ms gained.
        #expect(skew.reading(ofRaw: 65_000_000_000) == 65_012_000_000)
        // Before the origin it reads earlier still.
        #expect(skew.reading(ofRaw: 4_000_000_000) == 3_999_800_000)
    }

    @Test func aSlowClockLosesItsRate() {
        let skew = ClockSkew(origin: 0, rate: -200e-6)
        #expect(skew.reading(ofRaw: 3_600_000_000_000) == 3_599_280_000_000)
    }

    @Test func rawOfAReadingUndoesTheSkewToTheNanosecond() {
        for rate in [-1e-3, -200e-6, 0, 37e-6, 1e-3] {
            let skew = ClockSkew(origin: 123_456_789, rate: rate)
            for raw: UInt64 in [0, 123_456_789, 1_000_000_000, 86_400_000_000_000] {
                let back = skew.raw(ofReading: skew.reading(ofRaw: raw))
                #expect(abs(Int64(bitPattern: back &- raw)) <= 1, "rate \(rate), raw \(raw): back \(back)")
            }
        }
    }
}
