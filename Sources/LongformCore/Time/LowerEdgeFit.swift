/// The lower edge of a cloud of points (x, y), such as clock readings or times a frame was heard
/// against what they measure: delays only ever add, so the least delayed points lie on a line under
/// the rest. Which points lie lowest depends on the slope, so a fit runs in rounds, each about the
/// slope the round before found; the callers decide how many rounds, how many points and what
/// slopes are believable.
public enum LowerEdgeFit {
    /// One round about `slope`: the `count` points that lie lowest under a line of that slope,
    /// their means, and the least-squares slope through them; that slope is nil when their x span
    /// less than `minimumSpan` or all share one x.
    public static func round(_ points: [(x: Double, y: Double)], about slope: Double, keeping count: Int,
                             minimumSpan: Double = 0) -> (meanX: Double, meanY: Double, slope: Double?) {
        let lowest = Self.lowest(points, about: slope, count: count)
        let number = Double(lowest.count)
        let meanX = lowest.reduce(0) { $0 + $1.x } / number, meanY = lowest.reduce(0) { $0 + $1.y } / number
        guard let first = lowest.map(\.x).min(), let last = lowest.map(\.x).max(), last - first >= minimumSpan else { return (meanX, meanY, nil) }
        var covariance = 0.0, variance = 0.0
        for point in lowest {
            covariance += (point.x - meanX) * (point.y - meanY)
            variance += (point.x - meanX) * (point.x - meanX)
        }
        return (meanX, meanY, variance > 0 ? covariance / variance : nil)
    }

    /// The `count` points that lie lowest under a line of slope `slope`.
    public static func lowest(_ points: [(x: Double, y: Double)], about slope: Double, count: Int) -> ArraySlice<(x: Double, y: Double)> {
        points.sorted { $0.y - slope * $0.x < $1.y - slope * $1.x }.prefix(count)
    }
}

extension LowerEdgeFit {
    /// The lower convex hull of `points`, which are in order of x: its vertices from the first
    /// point to the last, each edge rising more steeply than the one before, every point on or
    /// above it. Of points that share an x, the lowest only.
    public static func lowerHull(_ points: [(x: Double, y: Double)]) -> [(x: Double, y: Double)] {
        var hull: [(x: Double, y: Double)] = []
        for point in points {
            if let last = hull.last, last.x == point.x {
                if point.y >= last.y { continue }
                hull.removeLast()
            }
            // The last vertex goes while it lies on or above the line from the one before it to
            // this point: it is then no corner of the edge beneath them.
            while hull.count >= 2 {
                let a = hull[hull.count - 2], b = hull[hull.count - 1]
                if (b.x - a.x) * (point.y - a.y) - (b.y - a.y) * (point.x - a.x) > 0 { break }
                hull.removeLast()
            }
            hull.append(point)
        }
        return hull
    }
}
