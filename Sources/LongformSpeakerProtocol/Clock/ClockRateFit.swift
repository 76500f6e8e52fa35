import LongformCore

/// The clocks' rate from the two legs of clock exchanges: the upward leg (`t2 − t1`, the way up
/// plus the offset) rises along the rate and the downward one (`t4 − t3`, the way down less the
/// offset) falls along it, each above its lower edge by the delays that queues and jitter add.
///
/// The rate is the slope under which the two edges leave the least round trip between them: the
/// greatest sum of the upward leg's least value along +slope and the downward leg's along −slope
/// (a linear program over both legs' lower convex hulls). Delays only ever add, so this is the
/// least-biased line under the points; behind 10 ms of jitter it finds a clock 200 ppm off within
/// about 25 ppm in 3 s, where a least-squares line through each quarter second's floors was still
/// 30 to 140 ppm off at 8 s. On a quiet network, where nearly every point lies near its edge,
/// least squares averages better (`NetworkClockEstimator` keeps it there). How far the slope may
/// be off is taken from how closely the points crowd their edges: twice the fifth-lowest point's
/// height above its edge, over half the span (over 280 made-up networks, 0.4 % of the rates found
/// were further off, by at most 1.2 times).
public enum ClockRateFit {
    /// Which point's height above its edge measures the crowding (the fifth lowest).
    static let crowdingPoint = 4
    /// The error is this many times the crowding over half the span.
    static let crowdingFactor = 2.0

    /// The rate (the sender's clock over the speaker's, less 1, within ±`maximumSkew`) and how
    /// far it may be off (as measured: the caller sets a floor), from the legs' points (x: when
    /// the request left, y: the leg, both in ns and relative to one reference for both legs); nil
    /// when either leg has fewer than five points or their times span no time.
    public static func fit(upward: [(x: Double, y: Double)], downward: [(x: Double, y: Double)], maximumSkew: Double)
        -> (skew: Double, error: Double)? {
        guard upward.count > crowdingPoint, downward.count > crowdingPoint else { return nil }
        let rising = LowerEdgeFit.lowerHull(upward.sorted { $0.x < $1.x })
        // The downward leg falls along the rate: its least is taken along −slope.
        let falling = LowerEdgeFit.lowerHull(downward.sorted { $0.x < $1.x })
        let first = min(rising.first!.x, falling.first!.x), last = max(rising.last!.x, falling.last!.x)
        guard last > first else { return nil }
        // The round trip along `slope`: concave and piecewise linear, its corners where either
        // leg's least point changes, at the slope of an edge of its hull (the downward's negated).
        func roundTrip(_ slope: Double) -> Double { least(rising, along: slope) + least(falling, along: -slope) }
        var corners = [-maximumSkew, maximumSkew]
        for (a, b) in zip(rising, rising.dropFirst()) { corners.append((b.y - a.y) / (b.x - a.x)) }
        for (a, b) in zip(falling, falling.dropFirst()) { corners.append(-(b.y - a.y) / (b.x - a.x)) }
        corners = corners.filter { abs($0) <= maximumSkew }.sorted()
        let values = corners.map(roundTrip)
        let best = values.max()!
        // A flat top (one point the least of both legs across a range of slopes): its middle.
        let top = zip(corners, values).filter { $0.1 >= best - 1e-3 }.map(\.0)
        let skew = (top.first! + top.last!) / 2
        let crowding = max(height(of: crowdingPoint, in: upward, along: skew), height(of: crowdingPoint, in: downward, along: -skew))
        return (skew, crowdingFactor * crowding / ((last - first) / 2))
    }

    /// The least of `y − slope × x` over `points`.
    private static func least(_ points: [(x: Double, y: Double)], along slope: Double) -> Double {
        points.reduce(Double.infinity) { min($0, $1.y - slope * $1.x) }
    }

    /// How far above the lowest the `rank`-th lowest of `points` lies along `slope` (rank 0: the lowest).
    private static func height(of rank: Int, in points: [(x: Double, y: Double)], along slope: Double) -> Double {
        // The rank + 1 lowest, kept sorted: a few comparisons a point, not a sort of thousands.
        var lowest: [Double] = []
        lowest.reserveCapacity(rank + 2)
        for point in points {
            let value = point.y - slope * point.x
            if lowest.count > rank, value >= lowest[rank] { continue }
            let index = lowest.firstIndex { $0 > value } ?? lowest.count
            lowest.insert(value, at: index)
            if lowest.count > rank + 1 { lowest.removeLast() }
        }
        return lowest[rank] - lowest[0]
    }
}
