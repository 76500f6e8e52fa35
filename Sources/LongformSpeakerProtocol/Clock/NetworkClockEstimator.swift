/// A speaker's estimate of the sender's clock, from clock-exchange samples. NTP's reasoning: a
/// sample with a short round trip bounds the offset tightly, so of the last `windowSize` samples
/// (of the last minute) the one with the smallest round trip gives the offset, and half its round
/// trip the uncertainty.
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
    }

    /// The estimate.
    public struct Estimate: Sendable, Equatable {
        /// Sender clock − speaker clock (ns).
        public var offset: Int64
        /// How far the true offset may be from it (ns).
        public var uncertainty: UInt64
    }

    /// Samples are forgotten after this long (ns).
    public static let sampleLifetime: UInt64 = 60_000_000_000
    /// Expired samples are forgotten once this many fresh ones are kept, about as good as they were.
    public static let freshSamplesToForget = 8

    /// How many recent samples are kept.
    public let windowSize: Int
    /// An estimate no better than this is "poor": no new anchor is started on it.
    public let goodUncertainty: UInt64
    private var samples: [Sample] = []

    /// An estimator over the last `windowSize` samples; good when the uncertainty is at most `goodUncertainty` ns.
    public init(windowSize: Int = 64, goodUncertainty: UInt64 = 2_000_000) {
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
        let offset = (Int64(bitPattern: reply.t2 &- reply.t1) &+ Int64(bitPattern: reply.t3 &- t4)) / 2
        let sample = Sample(offset: offset, roundTrip: total - held, receivedAt: t4)
        // Samples older than a minute go (the clocks drift apart, and an old best would hold the
        // estimate still for ever), but only once enough new ones have come: after an outage the
        // first replies (slowed by address resolution, queues) alone would move it by milliseconds.
        let fresh = samples.filter { t4 <= $0.receivedAt || t4 - $0.receivedAt <= Self.sampleLifetime }
        // A sample far slower than the best recent one is noise (a retransmitted or queued datagram).
        if let best = fresh.map(\.roundTrip).min(), best < UInt64.max / 10, sample.roundTrip > max(best * 10, 1_000_000) {
            return nil
        }
        samples.append(sample)
        // The stale ones go once the fresh ones are about as good (a round trip within twice the
        // stale best), or fill the window: a loaded network's first replies would otherwise move
        // a playing speaker by milliseconds.
        let freshBest = min(fresh.map(\.roundTrip).min() ?? .max, sample.roundTrip)
        let staleBest = samples.map(\.roundTrip).min() ?? .max
        if fresh.count + 1 >= windowSize || (fresh.count + 1 >= Self.freshSamplesToForget && freshBest / 2 <= staleBest) {
            samples = fresh + [sample]
        }
        if samples.count > windowSize { samples.removeFirst(samples.count - windowSize) }
        return sample
    }

    /// The estimate, or nil before the first sample.
    public var estimate: Estimate? {
        guard let best = samples.min(by: { $0.roundTrip < $1.roundTrip }) else { return nil }
        return Estimate(offset: best.offset, uncertainty: best.roundTrip / 2)
    }

    /// Whether the estimate is good enough to start playing in step.
    public var isGood: Bool { estimate.map { $0.uncertainty <= goodUncertainty } ?? false }

    /// A time on the speaker's clock as the sender's (network time).
    public func networkTime(fromLocal local: UInt64) -> UInt64? {
        estimate.map { UInt64(bitPattern: Int64(bitPattern: local) &+ $0.offset) }
    }

    /// A network time as the speaker's clock.
    public func localTime(fromNetwork network: UInt64) -> UInt64? {
        estimate.map { UInt64(bitPattern: Int64(bitPattern: network) &- $0.offset) }
    }

    /// The samples kept, oldest first.
    public var keptSamples: [Sample] { samples }
}
