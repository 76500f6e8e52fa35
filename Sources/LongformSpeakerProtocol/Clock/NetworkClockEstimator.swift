import LongformCore

/// A speaker's estimate of the sender's clock, from clock-exchange samples.
///
/// Each leg of an exchange takes at least the network's least delay and more when queues or
/// jitter hold it, never less; so the least of many samples of each leg, taken on its own, comes
/// close to that floor whatever the jitter (a reply whose whole round trip is short is far rarer
/// than a short leg: ±5 ms of jitter left the shortest of 64 round trips off by up to 1 ms, the
/// two legs' floors over 600 samples by tens of µs). The offset is half the difference of the two
/// legs' floors, and the uncertainty half their sum (a bound, since neither leg can have taken
/// less than no time) plus what an error in the rate could hide. The clocks' rates differ too
/// (crystals are tens of ppm apart, a poor one hundreds): each leg's floor moves along the rate,
/// so the rate is the slope of the legs' lower edges (each quarter second's least sample of each
/// leg, each second's once they span 20 s, over up to ten minutes: least squares through the
/// lowest on a quiet network; behind jitter `ClockRateFit`, over those or the samples kept),
/// taken fully once its error is small (a second on a quiet network, about ten behind 10 ms of
/// jitter); the samples whose floors are taken (the last minute, at most 3,072: 15 s at the first
/// minute's two hundred a second, and no more than the rate's error lets be brought to now along
/// it) are brought to now along it first. Until then the floors are those of the last 5 s,
/// brought to now along the rate as roughly measured if it is surely not 0 (its error under its
/// size).
/// A value type fed with timestamps: tested with made-up networks, no sockets.
public struct NetworkClockEstimator: Sendable {
    /// One exchange's four timestamps, reduced.
    public struct Sample: Sendable, Equatable {
        /// `((t2 − t1) + (t3 − t4)) / 2`: sender clock − speaker clock, if both legs took as long.
        public var offset: Int64
        /// `(t4 − t1) − (t3 − t2)`: the time on the network.
        public var roundTrip: UInt64
        /// t4: when the reply came, on the speaker's clock.
        public var receivedAt: UInt64
        /// `t2 − t1`: the way up plus the offset.
        public var upward: Int64
        /// `t4 − t3`: the way down minus the offset.
        public var downward: Int64
        /// t1: when the request left, on the speaker's clock.
        public var sentAt: UInt64
    }

    /// The estimate.
    public struct Estimate: Sendable, Equatable {
        /// Sender clock − speaker clock (ns), at `referenceTime`.
        public var offset: Int64
        /// How far the true offset may be from it (ns).
        public var uncertainty: UInt64
        /// The sender's clock rate over the speaker's, less 1: how the offset moves per ns.
        public var skew: Double = 0
        /// The speaker's time the offset is for (its last sample's arrival).
        public var referenceTime: UInt64 = 0

        /// The offset at `local`, on the speaker's clock.
        public func offset(at local: UInt64) -> Int64 {
            offset &+ Int64((Double(Int64(bitPattern: local &- referenceTime)) * skew).rounded())
        }
    }

    /// Samples are forgotten after this long (ns).
    public static let sampleLifetime: UInt64 = 60_000_000_000
    /// Expired samples are forgotten once this many fresh ones are kept, about as good as they were.
    public static let freshSamplesToForget = 8
    /// The rate is measured over this much of the legs' floors, once they span `skewMinimumSpan` (ns).
    public static let skewHistorySpan: UInt64 = 600_000_000_000
    /// One second: on a quiet network the floors of four quarter seconds give the rate within a
    /// few ppm; behind jitter its error says it is not yet usable (`usableRateError`). Not two: a
    /// group started 1.3 s after a speaker's first reply, and that speaker, 200 ppm fast, played
    /// its first second on the floors of the samples so far at no rate, up to 270 µs off.
    public static let skewMinimumSpan: UInt64 = 1_000_000_000
    /// The fewest bins least squares is fitted to.
    static let skewMinimumBins = 4
    /// Each leg's floor is taken per bin of this long (ns) for the rate: four within a second.
    public static let floorBinDuration: UInt64 = 250_000_000
    /// Once the floors span this much (ns), the rate is fitted to each second's rather than each bin's.
    static let wholeSecondBinsSpan: UInt64 = 20_000_000_000
    /// A rate is used once its error is at most this: 20 µs a second, which the floors of 5 s at no rate do not beat.
    public static let usableRateError = 0.000_02
    /// Samples are brought to now along a rate only as far back as its error (a bound) moves them
    /// by this much (ns), and never less than `unknownRateSpan`.
    static let rateErrorBudget = 100_000.0
    /// The most the clocks' rates are taken to differ: far beyond a crystal's error.
    public static let maximumSkew = 0.000_5
    /// While the rate is unknown the floors are taken over the samples of this span only (ns):
    /// clocks 200 ppm apart move by 1 ms in it, rather than 12 ms in a minute.
    public static let unknownRateSpan: UInt64 = 5_000_000_000
    /// How far the rate may be off, in the uncertainty (over the span of the samples the floors
    /// come from), before it is measured: a poor crystal's error (200 ppm). After, the error its
    /// fit gives (`rate(from:samples:near:)`), and never less than 2 ppm.
    static let unknownRateError = 0.000_2
    static let knownRateError = 0.000_002

    /// How many recent samples are kept.
    public let windowSize: Int
    /// An estimate no better than this is "poor": no new anchor is started on it.
    public let goodUncertainty: UInt64
    private var samples: [Sample] = []
    /// Each leg's least sample of each bin (by arrival), for the rate.
    private var binFloors: [BinFloors] = []
    /// The rate and how far it may be off, found again as each bin ends (each second's, after a minute).
    private var rate: (skew: Double, error: Double)?
    /// The estimate, found again at each sample.
    public private(set) var estimate: Estimate?
    /// Whether the clocks' rate is measured well enough to use (seconds after the first sample on a
    /// quiet network, up to half a minute behind jitter): until then the floors come from the last 5 s.
    public var isRateKnown: Bool { rate.map { $0.error <= Self.usableRateError } ?? false }
    /// How far the rate found may be off (a bound, as a fraction), nil before the samples span a
    /// second. Over `usableRateError` the rate is still used if it is surely not 0.
    public var rateError: Double? { rate?.error }

    /// An estimator over at most `windowSize` samples (a minute's at fifty a second, 15 s at two
    /// hundred); good when the uncertainty is at most `goodUncertainty` ns.
    public init(windowSize: Int = 3_072, goodUncertainty: UInt64 = 2_000_000) {
        self.windowSize = max(windowSize, 1)
        self.goodUncertainty = goodUncertainty
    }

    /// Adds an exchange (t4: the speaker's clock when the reply arrived); the caller has matched
    /// the reply's sequence number and t1 to a request it sent. Returns the sample, or
    /// nil for an impossible one (a reply from before its request, or a sender that answered
    /// after it replied), which is dropped.
    @discardableResult
    public mutating func add(_ reply: ClockExchange.Reply, receivedAt t4: UInt64) -> Sample? {
        guard t4 >= reply.t1, reply.t3 >= reply.t2 else { return nil }
        let total = t4 - reply.t1
        let held = reply.t3 - reply.t2
        guard total >= held else { return nil }
        let upward = Int64(bitPattern: reply.t2 &- reply.t1), downward = Int64(bitPattern: t4 &- reply.t3)
        let sample = Sample(offset: (upward &- downward) / 2, roundTrip: total - held, receivedAt: t4,
                            upward: upward, downward: downward, sentAt: reply.t1)
        // Samples older than a minute go (the clocks drift apart, and an old best would hold the
        // estimate still for ever), but only once enough new ones have come: after an outage the
        // first replies (slowed by address resolution, queues) alone would move it by milliseconds.
        // Counted in place, not copied: at two hundred replies a second, copying the window
        // each time was most of a speaker's first minute.
        let isFresh = { (kept: Sample) in t4 <= kept.receivedAt || t4 - kept.receivedAt <= Self.sampleLifetime }
        var freshCount = 0, freshBest: UInt64?
        for kept in samples where isFresh(kept) {
            freshCount += 1
            freshBest = min(freshBest ?? .max, kept.roundTrip)
        }
        // A sample far slower than the best recent one is noise (a retransmitted or queued datagram;
        // the legs' floors would not use it, but it would take a place in the window).
        if let best = freshBest, best < UInt64.max / 10, sample.roundTrip > max(best * 10, 20_000_000) {
            return nil
        }
        samples.append(sample)
        // The stale ones go once the fresh ones are about as good (a round trip within twice the
        // stale best), or fill the window: a loaded network's first replies would otherwise move
        // a playing speaker by milliseconds.
        let staleBest = samples.lazy.map(\.roundTrip).min() ?? .max
        if freshCount < samples.count - 1,
           freshCount + 1 >= windowSize || (freshCount + 1 >= Self.freshSamplesToForget && min(freshBest ?? .max, sample.roundTrip) / 2 <= staleBest) {
            samples.removeAll { !isFresh($0) } // the new sample is fresh: the fresh ones and it, in order
        }
        if samples.count > windowSize { samples.removeFirst(samples.count - windowSize) }
        addToBinFloors(sample)
        if let rate, isRateKnown {
            // Only as far back as the rate's error lets samples be brought to now.
            let span = UInt64(min(max(Self.rateErrorBudget / rate.error, Double(Self.unknownRateSpan)), Double(Self.sampleLifetime)))
            estimate = Self.estimate(from: samples, within: Self.recentSpan(span, of: samples, at: t4), skew: rate.skew, rateError: rate.error, at: t4)
        } else if let rate, abs(rate.skew) > rate.error {
            // Measured roughly, but surely not 0 (a crystal far off, behind jitter): nearer than
            // none. The floors of 5 s taken at no rate lag a clock 200 ppm off by 500 µs.
            estimate = Self.estimate(from: samples, within: Self.recentSpan(Self.unknownRateSpan, of: samples, at: t4), skew: rate.skew, rateError: rate.error, at: t4)
        } else {
            estimate = Self.estimate(from: samples, within: Self.recentSpan(Self.unknownRateSpan, of: samples, at: t4), skew: 0, rateError: Self.unknownRateError, at: t4)
        }
        return sample
    }

    /// `span` when the samples of the last `span` ns are enough to estimate from; nil (all of them)
    /// when they are too few or samples older than the lifetime are still kept (after an outage:
    /// the older estimate holds until the new samples are as good, as above).
    private static func recentSpan(_ span: UInt64, of samples: [Sample], at now: UInt64) -> UInt64? {
        guard let oldest = samples.first, now <= oldest.receivedAt || now - oldest.receivedAt <= sampleLifetime else { return nil }
        let recentCount = samples.reduce(0) { $0 + (now <= $1.receivedAt || now - $1.receivedAt <= span ? 1 : 0) }
        return recentCount >= freshSamplesToForget ? span : nil
    }

    /// Half the difference of the legs' floors, and half their sum plus what a rate off by
    /// `rateError` could hide over the samples' span (a floor may come from the oldest sample of
    /// each leg: all of the span), with every sample (of the last `span` ns; nil: all) brought to
    /// `now` along `skew` (the offset then moves by `skew` ns per ns).
    private static func estimate(from samples: [Sample], within span: UInt64?, skew: Double, rateError: Double, at now: UInt64) -> Estimate? {
        var upward = Int64.max, downward = Int64.max
        var oldest = UInt64.max, newest = UInt64.min
        for sample in samples where span.map({ now <= sample.receivedAt || now - sample.receivedAt <= $0 }) ?? true {
            oldest = min(oldest, sample.sentAt)
            newest = max(newest, sample.sentAt)
            // A leg measured `age` ns ago saw an offset smaller by `skew × age`: the upward leg
            // holds +offset, the downward one −offset.
            let drift = Int64((Double(Int64(bitPattern: now &- sample.sentAt)) * skew).rounded())
            upward = min(upward, sample.upward &+ drift)
            downward = min(downward, sample.downward &- drift)
        }
        guard oldest <= newest else { return nil } // no sample
        let sum = upward &+ downward
        let sampled = Double(newest - oldest)
        return Estimate(offset: (upward &- downward) / 2, uncertainty: UInt64(max(sum, 0) / 2) + UInt64(rateError * sampled),
                        skew: skew, referenceTime: now)
    }

    /// Each leg's least sample in one bin.
    private struct BinFloors {
        var bin: UInt64
        var upward: (sentAt: UInt64, value: Int64)
        var downward: (sentAt: UInt64, value: Int64)
    }

    /// Keeps `sample` if it is its bin's least of a leg; as a bin ends, finds the rate again from
    /// the bins before (as a second ends, once they span a minute: a fit over thousands of bins
    /// costs a millisecond). A gap (an outage) does not bias the slope.
    private mutating func addToBinFloors(_ sample: Sample) {
        // Never before the last bin: a reply stamped a little early (the wall clock stepped) joins it.
        let bin = max(sample.receivedAt / Self.floorBinDuration, binFloors.last?.bin ?? 0)
        if var last = binFloors.last, last.bin == bin {
            if sample.upward < last.upward.value { last.upward = (sample.sentAt, sample.upward) }
            if sample.downward < last.downward.value { last.downward = (sample.sentAt, sample.downward) }
            binFloors[binFloors.count - 1] = last
            return
        }
        let binsPerSecond = 1_000_000_000 / Self.floorBinDuration
        // Not while samples from before an outage are kept: the floors after it may have moved
        // (another route, queues), and a slope across the gap would be theirs, not the clocks'.
        let isAfterOutage = samples.first.map { sample.receivedAt > $0.receivedAt && sample.receivedAt - $0.receivedAt > Self.sampleLifetime } ?? false
        if let first = binFloors.first, !isAfterOutage, bin - first.bin < 60 * binsPerSecond || bin % binsPerSecond == 0 {
            rate = Self.rate(from: binFloors, samples: samples, near: rate?.skew ?? 0)
        }
        binFloors.append(BinFloors(bin: bin, upward: (sample.sentAt, sample.upward), downward: (sample.sentAt, sample.downward)))
        let tooOld = binFloors.prefix { (bin - $0.bin) * Self.floorBinDuration > Self.skewHistorySpan }.count
        binFloors.removeFirst(tooOld)
    }

    /// The rate, and how far it may be off: on a quiet network (the last 64 round trips' median
    /// within 1 ms of their least, as `ClockRequestSchedule` tells it), least squares through the
    /// lowest of the bins' floors, which nearly all lie close to their edges and so average out;
    /// behind jitter, the slope the legs' lower edges give (`ClockRateFit`), which needs only the
    /// few samples that come close to them. (The edges alone on a quiet network: joining rooms
    /// drifted apart by up to 170 µs in their first 4 s, 4 of 10 joins over 100 µs.)
    private static func rate(from quarterBins: [BinFloors], samples: [Sample], near guess: Double) -> (skew: Double, error: Double)? {
        let isQuiet = ClockRequestSchedule.isQuiet(samples.suffix(ClockRequestSchedule.roundTripsConsidered).map(\.roundTrip))
        return isQuiet ? leastSquaresRate(from: quarterBins, near: guess) : edgesRate(from: quarterBins, samples: samples)
    }

    /// On a quiet network, the rate from the legs' floors of single bins, once they span
    /// `skewMinimumSpan`: the upward leg's lower edge rises along the offset, the downward one's
    /// falls, so the rate is half the difference of their slopes, each by least squares through
    /// the lowest quarter of the floors. With how far it may be off. `guess`: the rate found
    /// before, where the search for the lower edges starts.
    private static func leastSquaresRate(from quarterBins: [BinFloors], near guess: Double) -> (skew: Double, error: Double)? {
        guard let first = quarterBins.first, let last = quarterBins.last, quarterBins.count >= skewMinimumBins,
              (last.bin - first.bin) * floorBinDuration >= skewMinimumSpan else { return nil }
        // Over 20 s, each second's floors: behind jitter the least of a second's samples lies
        // closer to the edge than that of a quarter's, and there are enough of them.
        let bins = (last.bin - first.bin) * floorBinDuration >= wholeSecondBinsSpan ? wholeSeconds(quarterBins) : quarterBins
        // Relative to the last bin, so that the sums keep their precision whatever the clocks read.
        let upward = lowerEdgeSlope(bins.map { (Double(Int64(bitPattern: $0.upward.sentAt &- last.upward.sentAt)), Double($0.upward.value &- last.upward.value)) }, near: guess)
        let downward = lowerEdgeSlope(bins.map { (Double(Int64(bitPattern: $0.downward.sentAt &- last.downward.sentAt)), Double($0.downward.value &- last.downward.value)) }, near: -guess)
        guard let upward, let downward else { return nil }
        // The legs' slopes are +rate and −rate: what their sum is off zero is an error of the fit.
        let error = max(knownRateError, 3 * max(upward.standardError, downward.standardError), abs(upward.slope + downward.slope))
        return (min(max((upward.slope - downward.slope) / 2, -maximumSkew), maximumSkew), error)
    }

    /// Behind jitter, the rate from the legs' lower edges (`ClockRateFit`), once the samples kept
    /// or the bins' floors span `skewMinimumSpan`: from whichever says it is nearer. The samples
    /// first (every one of them, where a bin keeps its least at no rate, which a clock 200 ppm
    /// off tilts by 50 µs across a quarter second); the floors, which go back ten minutes (each
    /// second's once they span 20 s), once the samples kept span less (15 s at two hundred a
    /// second).
    private static func edgesRate(from quarterBins: [BinFloors], samples: [Sample]) -> (skew: Double, error: Double)? {
        var fits: [(skew: Double, error: Double)] = []
        if let first = samples.first, let last = samples.last, last.sentAt > first.sentAt, last.sentAt - first.sentAt >= skewMinimumSpan {
            // Relative to the last sample, so that the sums keep their precision whatever the clocks
            // read; both legs' times from one reference, or their round trip would tilt with the slope.
            let x = { (sample: Sample) in Double(Int64(bitPattern: sample.sentAt &- last.sentAt)) }
            if let fit = ClockRateFit.fit(upward: samples.map { (x($0), Double($0.upward &- last.upward)) },
                                          downward: samples.map { (x($0), Double($0.downward &- last.downward)) }, maximumSkew: maximumSkew) {
                fits.append(fit)
            }
        }
        if let first = quarterBins.first, let last = quarterBins.last, (last.bin - first.bin) * floorBinDuration >= skewMinimumSpan {
            // Over 20 s, each second's floors: fewer points, as close to the edges.
            let bins = (last.bin - first.bin) * floorBinDuration >= wholeSecondBinsSpan ? wholeSeconds(quarterBins) : quarterBins
            // Both legs' times from the last upward floor's (as above).
            let upward = bins.map { (Double(Int64(bitPattern: $0.upward.sentAt &- last.upward.sentAt)), Double($0.upward.value &- last.upward.value)) }
            let downward = bins.map { (Double(Int64(bitPattern: $0.downward.sentAt &- last.upward.sentAt)), Double($0.downward.value &- last.downward.value)) }
            if let fit = ClockRateFit.fit(upward: upward, downward: downward, maximumSkew: maximumSkew) { fits.append(fit) }
        }
        return fits.min { $0.error < $1.error }.map { ($0.skew, max($0.error, knownRateError)) }
    }

    /// Each second's floors from its bins': the least of each leg.
    private static func wholeSeconds(_ bins: [BinFloors]) -> [BinFloors] {
        let binsPerSecond = 1_000_000_000 / floorBinDuration
        var seconds: [BinFloors] = []
        for bin in bins {
            if var last = seconds.last, last.bin / binsPerSecond == bin.bin / binsPerSecond {
                if bin.upward.value < last.upward.value { last.upward = bin.upward }
                if bin.downward.value < last.downward.value { last.downward = bin.downward }
                seconds[seconds.count - 1] = last
            } else {
                seconds.append(bin)
            }
        }
        return seconds
    }

    /// The slope of the lower edge of `points` (x, y), and its standard error: least squares
    /// through their lowest quarter (at least four) about a slope, starting from `guess`, found
    /// again about the slope found until it settles (which points lie lowest depends on the slope:
    /// a guess 20 ppm off over four minutes chose points at one end, and the slope came out 1 ppm
    /// off after two rounds). Nil when those points share one x.
    static func lowerEdgeSlope(_ points: [(x: Double, y: Double)], near guess: Double) -> (slope: Double, standardError: Double)? {
        var slope = guess
        let keeping = max(4, points.count / 4)
        for _ in 0..<8 {
            guard let fitted = LowerEdgeFit.round(points, about: slope, keeping: keeping).slope else { return nil }
            let previous = slope
            slope = fitted
            if abs(slope - previous) < 1e-9 { break }
        }
        // The kept points' scatter about their line over their spread in x (the points a round
        // keeps hug the line, so this is low: the caller takes three times it).
        let lowest = LowerEdgeFit.lowest(points, about: slope, count: keeping)
        let meanX = lowest.reduce(0) { $0 + $1.x } / Double(lowest.count)
        let meanResidual = lowest.reduce(0) { $0 + $1.y - slope * $1.x } / Double(lowest.count)
        var squares = 0.0, spread = 0.0
        for point in lowest {
            let residual = point.y - slope * point.x - meanResidual
            squares += residual * residual
            spread += (point.x - meanX) * (point.x - meanX)
        }
        let variance = squares / Double(max(lowest.count - 2, 1))
        return (slope, spread > 0 ? (variance / spread).squareRoot() : .infinity)
    }

    /// Whether the estimate is good enough to start playing in step.
    public var isGood: Bool { estimate.map { $0.uncertainty <= goodUncertainty } ?? false }

    /// A time on the speaker's clock as the sender's (network time).
    public func networkTime(fromLocal local: UInt64) -> UInt64? {
        estimate.map { UInt64(bitPattern: Int64(bitPattern: local) &+ $0.offset(at: local)) }
    }

    /// A network time as the speaker's clock.
    public func localTime(fromNetwork network: UInt64) -> UInt64? {
        guard let estimate else { return nil }
        // network = local + offset + skew × (local − reference), solved for local: with d the
        // network time past the reference less the offset, local − reference = d − d × skew / (1 + skew).
        // Wrapping arithmetic, and a correction of at most 0.05 % of d: an absurd network time
        // (an anchor's, from the wire) cannot trap.
        let d = Int64(bitPattern: network &- estimate.referenceTime) &- estimate.offset
        return estimate.referenceTime &+ UInt64(bitPattern: d &- Int64((Double(d) * estimate.skew / (1 + estimate.skew)).rounded()))
    }

    /// The samples kept, oldest first.
    public var keptSamples: [Sample] { samples }
}
