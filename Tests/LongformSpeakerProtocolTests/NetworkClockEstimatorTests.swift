import LongformSpeakerProtocol
import Testing

/// The clock estimate on made-up networks: with jitter it finds the true offset within the bound it
/// reports, and it says so when its estimate is poor.
@Suite struct NetworkClockEstimatorTests {
    /// One exchange over a network whose legs take `up` and `down` ns, with the sender's clock
    /// `offset` ns ahead of the speaker's.
    static func exchange(at local: UInt64, offset: Int64, up: UInt64, down: UInt64, held: UInt64 = 20_000, sequence: UInt32 = 0)
        -> (ClockExchange.Reply, UInt64) {
        let t1 = local
        let t2 = UInt64(Int64(t1 + up) + offset)
        let t3 = t2 + held
        let t4 = UInt64(Int64(t3 + down) - offset)
        return (ClockExchange.Reply(sequence: sequence, t1: t1, t2: t2, t3: t3), t4)
    }

    @Test func theShortestRoundTripGivesTheOffsetWithinItsBound() throws {
        var estimator = NetworkClockEstimator()
        #expect(estimator.estimate == nil && !estimator.isGood)
        let trueOffset: Int64 = 1_234_567_890_123
        var generator = SystemRandomNumberGenerator()
        var local: UInt64 = 5_000_000_000
        for sequence in 0..<64 {
            // 100 µs each way, plus up to 5 ms of jitter on either leg.
            let (reply, t4) = Self.exchange(at: local, offset: trueOffset, up: 100_000 + UInt64.random(in: 0...5_000_000, using: &generator),
                                            down: 100_000 + UInt64.random(in: 0...5_000_000, using: &generator), sequence: UInt32(sequence))
            estimator.add(reply, receivedAt: t4)
            local += 100_000_000
        }
        let estimate = try #require(estimator.estimate)
        #expect(abs(estimate.offset - trueOffset) <= Int64(estimate.uncertainty), "off by \(estimate.offset - trueOffset) ns, bound \(estimate.uncertainty)")
        #expect(estimator.isGood == (estimate.uncertainty <= 2_000_000))
        // Time converts both ways.
        let network = try #require(estimator.networkTime(fromLocal: 7_000_000_000))
        #expect(estimator.localTime(fromNetwork: network) == 7_000_000_000)
    }

    @Test func aSymmetricQuietNetworkIsExactAndAnAsymmetricOneStaysWithinTheBound() throws {
        var quiet = NetworkClockEstimator()
        let (reply, t4) = Self.exchange(at: 1_000, offset: -42_000, up: 50_000, down: 50_000)
        let added = quiet.add(reply, receivedAt: t4)
        let sample = try #require(added)
        #expect(sample.offset == -42_000 && sample.roundTrip == 100_000)
        #expect(quiet.estimate?.offset == -42_000 && quiet.estimate?.uncertainty == 50_000 && quiet.isGood)

        var lopsided = NetworkClockEstimator()
        let (slowUp, slowT4) = Self.exchange(at: 1_000, offset: 0, up: 5_000_000, down: 100_000)
        lopsided.add(slowUp, receivedAt: slowT4)
        let estimate = try #require(lopsided.estimate)
        #expect(abs(estimate.offset) <= Int64(estimate.uncertainty))
        #expect(estimate.offset == 2_450_000, "half the difference of the legs")
        #expect(!lopsided.isGood, "a 5.1 ms round trip leaves 2.55 ms of uncertainty, over the 2 ms a start needs: \(estimate)")
    }

    @Test func impossibleAndStraySamplesAreDropped() throws {
        var estimator = NetworkClockEstimator()
        // A reply that arrived before its request left, and a sender that answered before it heard.
        var added = estimator.add(ClockExchange.Reply(sequence: 1, t1: 1_000, t2: 5, t3: 9), receivedAt: 500)
        #expect(added == nil)
        added = estimator.add(ClockExchange.Reply(sequence: 1, t1: 1_000, t2: 9, t3: 5), receivedAt: 2_000)
        #expect(added == nil)
        added = estimator.add(ClockExchange.Reply(sequence: 1, t1: 1_000, t2: 0, t3: UInt64.max), receivedAt: 2_000)
        #expect(added == nil)
        let (good, goodT4) = Self.exchange(at: 10_000, offset: 0, up: 60_000, down: 60_000)
        added = estimator.add(good, receivedAt: goodT4)
        #expect(added != nil)
        // A datagram that sat in a queue for 50 ms is noise beside a 120 µs round trip.
        let (stale, staleT4) = Self.exchange(at: 20_000, offset: 0, up: 50_000_000, down: 60_000)
        added = estimator.add(stale, receivedAt: staleT4)
        #expect(added == nil)
        #expect(estimator.keptSamples.count == 1)
    }

    @Test func datagramsDecodeOnlyWhenTheyAreExactlyWhatTheySayTheyAre() {
        let request = ClockExchange.Request(sequence: 9, t1: 123_456_789)
        let reply = ClockExchange.Reply(sequence: 9, t1: 123_456_789, t2: 5, t3: 6)
        #expect(ClockExchange.decodeRequest(ClockExchange.encode(request)) == request)
        #expect(ClockExchange.decodeReply(ClockExchange.encode(reply)) == reply)
        #expect(ClockExchange.encode(request).count == 24 && ClockExchange.encode(reply).count == 40)
        #expect(ClockExchange.decodeReply(ClockExchange.encode(request)) == nil)
        #expect(ClockExchange.decodeRequest(ClockExchange.encode(reply)) == nil)
        #expect(ClockExchange.decodeRequest(ClockExchange.encode(request).dropLast()) == nil)
        #expect(ClockExchange.decodeRequest([UInt8](repeating: 0, count: 24)) == nil)
        var otherVersion = ClockExchange.encode(request)
        otherVersion[2] = 2
        #expect(ClockExchange.decodeRequest(otherVersion) == nil)
    }

    @Test func afterAnOutageOldSamplesStayUntilEnoughNewOnesHaveCome() throws {
        var estimator = NetworkClockEstimator()
        var local: UInt64 = 1_000_000_000
        for sequence in 0..<16 {
            let (reply, t4) = Self.exchange(at: local, offset: 0, up: 50_000, down: 50_000, sequence: UInt32(sequence))
            estimator.add(reply, receivedAt: t4)
            local += 1_000_000_000
        }
        // Two minutes without a reply, then replies that took 3 ms on the way up (address resolution, queues).
        local += 120_000_000_000
        for sequence in 0..<(NetworkClockEstimator.freshSamplesToForget - 1) {
            let (reply, t4) = Self.exchange(at: local, offset: 0, up: 3_000_000, down: 50_000, sequence: UInt32(100 + sequence))
            estimator.add(reply, receivedAt: t4)
            local += 100_000_000
            #expect(estimator.estimate?.offset == 0, "one slow reply after an outage moved the estimate")
        }
        // Enough fresh samples, but far slower than the stale best: the stale estimate holds until
        // the fresh ones fill the window.
        for sequence in 0..<(estimator.windowSize - NetworkClockEstimator.freshSamplesToForget) {
            let (reply, t4) = Self.exchange(at: local, offset: 0, up: 3_000_000, down: 50_000, sequence: UInt32(200 + sequence))
            estimator.add(reply, receivedAt: t4)
            local += 100_000_000
            #expect(estimator.estimate?.offset == 0)
        }
        let (reply, t4) = Self.exchange(at: local, offset: 0, up: 3_000_000, down: 50_000, sequence: 999)
        estimator.add(reply, receivedAt: t4)
        #expect(estimator.keptSamples.count == estimator.windowSize, "the stale samples are gone")
        #expect(try #require(estimator.estimate).uncertainty > 1_000_000)

        // Fresh samples as good as the stale ones replace them after eight.
        var quick = NetworkClockEstimator()
        local = 1_000_000_000
        for sequence in 0..<16 {
            let (reply, t4) = Self.exchange(at: local, offset: 0, up: 50_000, down: 50_000, sequence: UInt32(sequence))
            quick.add(reply, receivedAt: t4)
            local += 1_000_000_000
        }
        local += 120_000_000_000
        for sequence in 0..<NetworkClockEstimator.freshSamplesToForget {
            let (reply, t4) = Self.exchange(at: local, offset: 500_000, up: 60_000, down: 60_000, sequence: UInt32(100 + sequence))
            quick.add(reply, receivedAt: t4)
            local += 100_000_000
        }
        #expect(quick.keptSamples.count == NetworkClockEstimator.freshSamplesToForget && quick.estimate?.offset == 500_000)
    }
}
