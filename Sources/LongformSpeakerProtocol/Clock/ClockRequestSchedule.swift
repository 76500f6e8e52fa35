/// How often a speaker asks for the sender's clock: two hundred times a second at first; once the
/// network is seen to be quiet (after 64 round trips, a third of a second), forty a second, and
/// four a second once the clocks' rate is known too (after 10 s at the earliest); behind jitter
/// two hundred for the first minute, fifty after.
///
/// Each leg's floor is the least of the samples kept (a minute's), so the more samples, the
/// closer it comes under jitter; on a quiet network nearly every sample is at the floor and more
/// of them only cost: each exchange wakes the speaker and the sender, and fifty a second were a
/// fifth of what a playing speaker cost. A value type fed with round trips: tested without sockets.
public struct ClockRequestSchedule: Sendable, Equatable {
    /// Between requests for the first `startupSpan` (ns): two hundred a second. Until the rate is
    /// known the floors are those of the last seconds, and behind jitter four times the samples
    /// bring them closer.
    public static let startupInterval: UInt64 = 5_000_000
    /// How long a speaker asks at `startupInterval` after it is given a sender at most, behind
    /// jitter (ns).
    public static let startupSpan: UInt64 = 60_000_000_000
    /// How long it asks more often than `quietInterval` at least, on a quiet network (ns): about
    /// four hundred samples, the rate measured over 10 s.
    public static let quietStartupSpan: UInt64 = 10_000_000_000
    /// Between requests in the first `quietStartupSpan` once the network is seen to be quiet (ns):
    /// forty a second. On such a network nearly every sample lies at its leg's floor, so a fifth of
    /// the samples find the offset and the rate as well; two hundred a second were two thousand
    /// exchanges in a speaker's first 10 s, each waking the speaker and the sender.
    public static let quietStartupInterval: UInt64 = 25_000_000
    /// Between requests after the first minute behind jitter (ns): fifty a second. Five times as
    /// many samples as ten a second brought a speaker's error behind ±5 ms of jitter from a median
    /// of 15–40 µs to 6–9 µs.
    public static let jitteryInterval: UInt64 = 20_000_000
    /// Between requests once the network is quiet (ns): four a second. Each exchange costs the
    /// speaker a wake and the kernel's send and receive (about 140 µs of CPU here); at ten a
    /// second they were a sixth of a playing speaker's CPU, and on such a network the floors of a
    /// minute's 240 samples keep the estimate within 10 µs (`ClockRequestScheduleTests`).
    public static let quietInterval: UInt64 = 250_000_000
    /// A network is quiet while the median of the recent round trips is within this of their
    /// least (ns): most samples then lie within half of it of each leg's floor, and the least of a
    /// minute's six hundred within microseconds.
    public static let quietSpread: UInt64 = 1_000_000
    /// How many recent round trips the spread is taken over (16 s at four a second, a third of a
    /// second at two hundred): enough that one late reply does not move the median; jitter that
    /// comes is seen after half of them (8 s), while the floors of the samples before it still hold.
    public static let roundTripsConsidered = 64

    /// The speaker's clock when the sender was given (ns).
    public let startedAt: UInt64
    /// The recent round trips, a ring of at most `roundTripsConsidered`.
    private var roundTrips: [UInt64] = []
    /// Where the next round trip goes in the ring once it is full.
    private var nextSlot = 0

    /// A schedule for a sender given at `startedAt` on the speaker's clock.
    public init(startedAt: UInt64) {
        self.startedAt = startedAt
    }

    /// Notes a reply's round trip (its time on the network, ns).
    public mutating func noteRoundTrip(_ roundTrip: UInt64) {
        if roundTrips.count < Self.roundTripsConsidered {
            roundTrips.append(roundTrip)
        } else {
            roundTrips[nextSlot] = roundTrip
            nextSlot = (nextSlot + 1) % Self.roundTripsConsidered
        }
    }

    /// Whether the recent round trips say the network is quiet; false until the ring is full.
    public var isNetworkQuiet: Bool { Self.isQuiet(roundTrips) }

    /// Whether `roundTrips` (the most recent, in any order) say a network is quiet: as many as
    /// `roundTripsConsidered`, their median within `quietSpread` of their least.
    public static func isQuiet(_ roundTrips: some Collection<UInt64>) -> Bool {
        guard roundTrips.count == roundTripsConsidered else { return false }
        let sorted = roundTrips.sorted()
        return sorted[sorted.count / 2] - sorted[0] <= quietSpread
    }

    /// The time to wait after a request sent at `now` (the speaker's clock, ns), the clocks'
    /// rate known (`NetworkClockEstimator.isRateKnown`) or not.
    public func interval(at now: UInt64, isRateKnown: Bool) -> UInt64 {
        let elapsed = now < startedAt ? 0 : now - startedAt
        if isNetworkQuiet {
            if elapsed >= Self.quietStartupSpan, isRateKnown { return Self.quietInterval }
            if elapsed < Self.startupSpan { return Self.quietStartupInterval }
        }
        return elapsed < Self.startupSpan ? Self.startupInterval : Self.jitteryInterval
    }
}
