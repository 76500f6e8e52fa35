import LongformCore
import Testing

/// The shared round of the lower-edge fits (`HeardFrameFilter`, `NetworkClockEstimator`).
@Suite struct LowerEdgeFitTests {
    @Test func aRoundFindsTheLineUnderDelayedPoints() {
        // y = 3x + 5 for every fourth point; the others arrive up to 40 late.
        let points = (0..<200).map { x -> (x: Double, y: Double) in
            let delay: Double = x % 4 == 0 ? 0 : Double((x * 37) % 40 + 1)
            let onEdge: Double = 3 * Double(x) + 5
            return (Double(x), onEdge + delay)
        }
        // About a guess 10 % off, the lowest quarter is already mostly the undelayed points; about
        // the slope found, exactly them.
        var slope = 2.7
        for _ in 0..<4 { slope = LowerEdgeFit.round(points, about: slope, keeping: 50).slope ?? slope }
        #expect(abs(slope - 3) < 1e-12)
        let round = LowerEdgeFit.round(points, about: 3, keeping: 50)
        let edgeAtMeanX: Double = 3 * round.meanX + 5
        #expect(abs(round.meanY - edgeAtMeanX) < 1e-9, "the means lie on the edge")
    }

    @Test func noSlopeFromPointsThatSpanTooLittle() {
        let points: [(x: Double, y: Double)] = [(1, 1), (1, 2), (1, 3), (2, 9)]
        #expect(LowerEdgeFit.round(points, about: 0, keeping: 3).slope == nil, "one x: no slope")
        let short = LowerEdgeFit.round(points, about: 0, keeping: 4, minimumSpan: 2)
        #expect(short.slope == nil && short.meanX == 1.25 && short.meanY == 3.75, "the means without a slope")
        #expect(LowerEdgeFit.round(points, about: 0, keeping: 4, minimumSpan: 1).slope != nil)
    }

    @Test func theLowerHullRunsUnderEveryPointThroughItsCorners() {
        // A V with points above it, two sharing the first x (the lower counts), two on its edges.
        let points: [(x: Double, y: Double)] = [(0, 9), (0, 8), (1, 9), (2, 4), (3, 6), (4, 0), (5, 7), (6, 2), (7, 4), (8, 6), (8, 9)]
        let hull = LowerEdgeFit.lowerHull(points)
        #expect(hull.map(\.x) == [0, 4, 6, 8] && hull.map(\.y) == [8, 0, 2, 6], "\(hull)")
        #expect(LowerEdgeFit.lowerHull([]).isEmpty && LowerEdgeFit.lowerHull([(1, 1)]).count == 1)
    }
}
