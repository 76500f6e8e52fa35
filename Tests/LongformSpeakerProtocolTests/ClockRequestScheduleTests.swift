@testable import LongformSpeakerProtocol
import LongformTestSupport
import Testing

/// How often a speaker asks for the clock: fast at first, then as the network's jitter needs; and a speaker that asks four times a second on a quiet network still knows the
/// sender's clock to microseconds.
@Suite struct ClockRequestScheduleTests {
    static let start: UInt64 = 5_000_000_000
    static let afterStartup = start + ClockRequestSchedule.startupSpan
    static let afterQuietStartup = start + ClockRequestSchedule.quietStartupSpan

    /// A schedule that has been told `roundTrips`.
    static func schedule(told roundTrips: [UInt64]) -> ClockRequestSchedule {
        var schedule = ClockRequestSchedule(startedAt: start)
        for roundTrip in roundTrips { schedule.noteRoundTrip(roundTrip) }
        return schedule
    }

    @Test func asksTwoHundredTimesASecondUntilTheNetworkIsSeenQuietThenFortyUntilTheRateIsKnown() {
        // Too few round trips to tell, or jittery ones: two hundred a second.
        #expect(Self.schedule(told: Array(repeating: 80_000, count: 63)).interval(at: Self.start, isRateKnown: true) == ClockRequestSchedule.startupInterval)
        #expect(Self.schedule(told: (0..<64).map { UInt64($0) * 200_000 }).interval(at: Self.start, isRateKnown: true) == ClockRequestSchedule.startupInterval)
        let quiet = Self.schedule(told: Array(repeating: 80_000, count: 100))
        #expect(quiet.isNetworkQuiet)
        #expect(quiet.interval(at: Self.start, isRateKnown: true) == ClockRequestSchedule.quietStartupInterval)
        #expect(quiet.interval(at: Self.afterQuietStartup - 1, isRateKnown: true) == ClockRequestSchedule.quietStartupInterval)
        #expect(quiet.interval(at: Self.afterQuietStartup, isRateKnown: true) == ClockRequestSchedule.quietInterval)
        // The rate not known yet: forty a second for the first minute, fifty after.
        #expect(quiet.interval(at: Self.afterQuietStartup, isRateKnown: false) == ClockRequestSchedule.quietStartupInterval)
        #expect(quiet.interval(at: Self.afterStartup - 1, isRateKnown: false) == ClockRequestSchedule.quietStartupInterval)
        #expect(quiet.interval(at: Self.afterStartup, isRateKnown: false) == ClockRequestSchedule.jitteryInterval)
        // A clock read before the sender was given (stepped back): still the start.
        #expect(quiet.interval(at: Self.start - 1_000, isRateKnown: true) == ClockRequestSchedule.quietStartupInterval)
    }

    @Test func fortyASecondOnAQuietNetworkFindTheClockAsWellAsTwoHundredInTheFirstSeconds() {
        // Up to 200 µs on each leg, the sender's clock 35 ppm fast: the first 10 s at forty a
        // second once 64 round trips showed the network quiet, against two hundred throughout.
        for seed: UInt64 in 1...3 {
            let scheduled = NetworkClockEstimatorTests.run(seconds: 10, jitter: 200_000, skew: 0.000_035, seed: seed, isScheduled: true).checks
            let fast = NetworkClockEstimatorTests.run(seconds: 10, jitter: 200_000, skew: 0.000_035, seed: seed, startupSeconds: 10).checks
            #expect(scheduled.filter { $0.second >= 1 }.allSatisfy { $0.interval == ClockRequestSchedule.quietStartupInterval }, "seed \(seed): \(Set(scheduled.map(\.interval)))")
            // The first second alike (the first 64 round trips at two hundred a second either way).
            let worst = scheduled.filter { $0.second >= 1 }.map { abs($0.error) }.max() ?? .max
            let worstFast = fast.filter { $0.second >= 1 }.map { abs($0.error) }.max() ?? .max
            // Measured: 5.1, 5.4 and 2.6 µs at forty, 4.1, 0.7 and 1.3 µs at two hundred.
            #expect(worst <= 10_000, "seed \(seed): off by up to \(worst) ns at forty a second, \(worstFast) ns at two hundred")
            #expect(scheduled.allSatisfy { abs($0.error) <= Int64($0.uncertainty) }, "seed \(seed): a bound that did not hold")
        }
    }

    @Test func asksFourTimesASecondOnAQuietNetworkAndFiftyBehindJitter() {
        var generator = SeededRandomGenerator(seed: 3)
        // Loopback-like: 60 to 250 µs, with one reply in eight held 30 ms (a busy host).
        let quiet = (0..<200).map { index in index % 8 == 0 ? 30_000_000 : UInt64.random(in: 60_000...250_000, using: &generator) }
        #expect(Self.schedule(told: quiet).interval(at: Self.afterStartup, isRateKnown: true) == ClockRequestSchedule.quietInterval)
        // Wi-Fi behind up to 5 ms on each leg.
        let jittery = (0..<200).map { _ in UInt64.random(in: 0...5_000_000, using: &generator) + UInt64.random(in: 0...5_000_000, using: &generator) }
        #expect(Self.schedule(told: jittery).interval(at: Self.afterStartup, isRateKnown: true) == ClockRequestSchedule.jitteryInterval)
        // Too few round trips to tell: as behind jitter.
        #expect(Self.schedule(told: Array(quiet.prefix(63))).interval(at: Self.afterStartup, isRateKnown: true) == ClockRequestSchedule.jitteryInterval)
    }

    @Test func jitterThatComesIsSeenWithinHalfTheRoundTripsConsidered() {
        var schedule = Self.schedule(told: Array(repeating: 100_000, count: 64))
        var repliesUntilJittery = 0
        while schedule.isNetworkQuiet {
            schedule.noteRoundTrip(8_000_000)
            repliesUntilJittery += 1
        }
        #expect(repliesUntilJittery == ClockRequestSchedule.roundTripsConsidered / 2)
        // And back to four a second once more than half the round trips are quiet again.
        for _ in 0..<ClockRequestSchedule.roundTripsConsidered / 2 { schedule.noteRoundTrip(100_000) }
        #expect(!schedule.isNetworkQuiet)
        schedule.noteRoundTrip(100_000)
        #expect(schedule.interval(at: Self.afterStartup, isRateKnown: true) == ClockRequestSchedule.quietInterval)
    }

    @Test func fourASecondOnAQuietNetworkKeepsTheOffsetWithinMicroseconds() {
        // Up to 200 µs on each leg, the sender's clock 35 ppm fast, three minutes: from 10 s on
        // the speaker asks four times a second, and its estimate stays within 10 µs of the truth
        // and within the bound it gives.
        for seed: UInt64 in 1...3 {
            let checks = NetworkClockEstimatorTests.run(seconds: 180, jitter: 200_000, skew: 0.000_035, seed: seed, isScheduled: true).checks
            let later = checks.filter { $0.second >= 11 }
            #expect(later.count >= 160, "seed \(seed): \(later.count) checks")
            #expect(later.allSatisfy { $0.interval == ClockRequestSchedule.quietInterval }, "seed \(seed): \(Set(later.map(\.interval)))")
            let worst = later.map { abs($0.error) }.max() ?? .max
            #expect(worst <= 10_000, "seed \(seed): off by up to \(worst) ns")
            #expect(later.allSatisfy { abs($0.error) <= Int64($0.uncertainty) }, "seed \(seed): a bound that did not hold")
        }
    }

    @Test func behindJitterTheSpeakerKeepsAskingFiftyTimesASecond() {
        let checks = NetworkClockEstimatorTests.run(seconds: 90, jitter: 5_000_000, skew: 0.000_035, seed: 7, isScheduled: true).checks
        #expect(checks.filter { $0.second < 59 }.allSatisfy { $0.interval == ClockRequestSchedule.startupInterval })
        #expect(checks.filter { $0.second >= 61 }.allSatisfy { $0.interval == ClockRequestSchedule.jitteryInterval })
    }
}
