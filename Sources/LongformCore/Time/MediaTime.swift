/// A rational time, `value / timescale` seconds, with CMTime's semantics:
/// LCM arithmetic, rounding that is flagged, and invalid, indefinite and
/// infinite values that propagate through arithmetic.
public struct MediaTime: Sendable {
    /// The numerator; meaningful only for numeric times.
    public var value: Int64
    /// Units per second; always positive for numeric times.
    public var timescale: Int32
    /// Validity, rounding and the non-numeric kinds.
    public var flags: Flags

    /// CMTime's flags, under the same meanings.
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        /// Creates flags from their raw bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// The time is valid (every time but `.invalid` has it).
        public static let valid = Flags(rawValue: 1 << 0)
        /// Some arithmetic or conversion that produced it was not exact.
        public static let hasBeenRounded = Flags(rawValue: 1 << 1)
        /// +∞.
        public static let positiveInfinity = Flags(rawValue: 1 << 2)
        /// −∞.
        public static let negativeInfinity = Flags(rawValue: 1 << 3)
        /// An unknown time, such as the duration of a live stream.
        public static let indefinite = Flags(rawValue: 1 << 4)
        /// The flags that make a time non-numeric.
        static let nonNumeric: Flags = [.positiveInfinity, .negativeInfinity, .indefinite]
    }

    /// The largest timescale arithmetic will choose, as `kCMTimeMaxTimescale`.
    public static let maxTimescale: Int32 = 1_000_000_000

    /// Creates the numeric time `value / timescale`; a timescale ≤ 0 gives `.invalid`.
    public init(value: Int64, timescale: Int32) {
        if timescale <= 0 {
            self = .invalid
        } else {
            self.value = value
            self.timescale = timescale
            self.flags = .valid
        }
    }

    /// Creates the time nearest to `seconds` at `preferredTimescale`, flagged as rounded when not exact.
    /// NaN gives `.invalid`; ±infinity gives the infinite times.
    public init(seconds: Double, preferredTimescale: Int32) {
        if seconds.isNaN || preferredTimescale <= 0 { self = .invalid; return }
        if seconds == .infinity { self = .positiveInfinity; return }
        if seconds == -.infinity { self = .negativeInfinity; return }
        let scaled = seconds * Double(preferredTimescale)
        guard abs(scaled) < 9.2e18 else { self = seconds > 0 ? .positiveInfinity : .negativeInfinity; return }
        let rounded = scaled.rounded(.toNearestOrAwayFromZero)
        self.init(value: Int64(rounded), timescale: preferredTimescale)
        if rounded != scaled { flags.insert(.hasBeenRounded) }
    }

    private init(value: Int64, timescale: Int32, flags: Flags) {
        self.value = value
        self.timescale = timescale
        self.flags = flags
    }

    /// The invalid time; arithmetic with it gives `.invalid`.
    public static let invalid = MediaTime(value: 0, timescale: 0, flags: [])
    /// Zero seconds.
    public static let zero = MediaTime(value: 0, timescale: 1)
    /// +∞.
    public static let positiveInfinity = MediaTime(value: 0, timescale: 0, flags: [.valid, .positiveInfinity])
    /// −∞.
    public static let negativeInfinity = MediaTime(value: 0, timescale: 0, flags: [.valid, .negativeInfinity])
    /// An unknown time.
    public static let indefinite = MediaTime(value: 0, timescale: 0, flags: [.valid, .indefinite])

    /// Whether the time is valid.
    public var isValid: Bool { flags.contains(.valid) }
    /// Whether the time is a valid finite number.
    public var isNumeric: Bool { isValid && flags.isDisjoint(with: Flags.nonNumeric) }
    /// Whether the time is +∞.
    public var isPositiveInfinity: Bool { isValid && flags.contains(.positiveInfinity) }
    /// Whether the time is −∞.
    public var isNegativeInfinity: Bool { isValid && flags.contains(.negativeInfinity) }
    /// Whether the time is indefinite.
    public var isIndefinite: Bool { isValid && flags.contains(.indefinite) }
    /// Whether some arithmetic that produced this time rounded.
    public var hasBeenRounded: Bool { flags.contains(.hasBeenRounded) }

    /// The time in seconds: NaN when invalid or indefinite, ±infinity when infinite.
    public var seconds: Double {
        if !isValid || isIndefinite { return .nan }
        if isPositiveInfinity { return .infinity }
        if isNegativeInfinity { return -.infinity }
        return Double(value) / Double(timescale)
    }
}

// MARK: - Rounding and conversion

extension MediaTime {
    /// How a conversion to a coarser timescale rounds, as `CMTimeRoundingMethod`.
    public enum RoundingMethod: Sendable {
        /// Half away from zero (CMTime's default).
        case `default`
        /// Half away from zero.
        case roundHalfAwayFromZero
        /// Toward zero (truncation).
        case roundTowardZero
        /// Away from zero.
        case roundAwayFromZero
        /// Toward zero going to a smaller timescale, away from zero going to a larger one,
        /// and never rounds a non-zero value to zero.
        case quickTime
        /// Toward +∞ (ceiling).
        case roundTowardPositiveInfinity
        /// Toward −∞ (floor).
        case roundTowardNegativeInfinity
    }

    /// This time at `newTimescale`, rounded by `method`; flagged as rounded when not exact.
    public func convertScale(_ newTimescale: Int32, method: RoundingMethod = .default) -> MediaTime {
        guard isNumeric else { return self }
        guard newTimescale > 0 else { return .invalid }
        if newTimescale == timescale { return self }
        guard let (converted, exact) = Self.rescale(value, from: Int64(timescale), to: Int64(newTimescale), method: method) else {
            return value < 0 ? .negativeInfinity : .positiveInfinity
        }
        var result = MediaTime(value: converted, timescale: newTimescale)
        if !exact || hasBeenRounded { result.flags.insert(.hasBeenRounded) }
        return result
    }

    /// `value * to / from`, rounded; nil when the result does not fit in Int64.
    static func rescale(_ value: Int64, from: Int64, to: Int64, method: RoundingMethod) -> (Int64, Bool)? {
        let product = value.multipliedFullWidth(by: to)
        let divisor = Int64(from)
        guard let (quotient, remainder) = Int128Parts(high: product.high, low: product.low).divided(by: divisor) else { return nil }
        if remainder == 0 { return (quotient, true) }
        let negative = product.high < 0
        let twiceRemainder = remainder.magnitude * 2
        let awayFromZero: Bool
        switch method {
        case .default, .roundHalfAwayFromZero: awayFromZero = twiceRemainder >= divisor.magnitude
        case .roundTowardZero: awayFromZero = false
        case .roundAwayFromZero: awayFromZero = true
        case .quickTime: awayFromZero = to > from || quotient == 0
        case .roundTowardPositiveInfinity: awayFromZero = !negative
        case .roundTowardNegativeInfinity: awayFromZero = negative
        }
        guard awayFromZero else { return (quotient, false) }
        let (adjusted, overflow) = negative ? quotient.subtractingReportingOverflow(1) : quotient.addingReportingOverflow(1)
        return overflow ? nil : (adjusted, false)
    }
}

/// A signed 128-bit number as Int64's full-width multiplication returns it.
struct Int128Parts {
    var high: Int64
    var low: UInt64

    /// Truncating division by a positive divisor; nil when the quotient does not fit in Int64.
    func divided(by divisor: Int64) -> (quotient: Int64, remainder: Int64)? {
        precondition(divisor > 0)
        let negative = high < 0
        // Magnitude of the 128-bit value.
        var magHigh = UInt64(bitPattern: high)
        var magLow = low
        if negative {
            magLow = ~magLow &+ 1
            magHigh = ~magHigh &+ (magLow == 0 ? 1 : 0)
        }
        let d = UInt64(divisor)
        guard magHigh < d else { return nil }
        let (q, r) = d.dividingFullWidth((high: magHigh, low: magLow))
        if negative {
            guard q <= UInt64(Int64.max) + 1 else { return nil }
            return (q == UInt64(Int64.max) + 1 ? Int64.min : -Int64(q), -Int64(r))
        }
        guard q <= UInt64(Int64.max) else { return nil }
        return (Int64(q), Int64(r))
    }
}

// MARK: - Arithmetic

extension MediaTime {
    /// The sum, on the LCM of the timescales (or the larger timescale, rounded, when the LCM is too large).
    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        combine(lhs, rhs, negateRight: false)
    }

    /// The difference, with the same timescale rules as `+`.
    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        combine(lhs, rhs, negateRight: true)
    }

    /// Adds in place.
    public static func += (lhs: inout MediaTime, rhs: MediaTime) { lhs = lhs + rhs }
    /// Subtracts in place.
    public static func -= (lhs: inout MediaTime, rhs: MediaTime) { lhs = lhs - rhs }

    /// The negated time; ±∞ swap.
    public static prefix func - (time: MediaTime) -> MediaTime {
        if !time.isValid || time.isIndefinite { return time }
        if time.isPositiveInfinity { return .negativeInfinity }
        if time.isNegativeInfinity { return .positiveInfinity }
        if time.value == .min { return .positiveInfinity }
        var negated = time
        negated.value = -time.value
        return negated
    }

    private static func combine(_ lhs: MediaTime, _ rhs: MediaTime, negateRight: Bool) -> MediaTime {
        guard lhs.isValid, rhs.isValid else { return .invalid }
        if lhs.isIndefinite || rhs.isIndefinite { return .indefinite }
        let right = negateRight ? -rhs : rhs
        let lhsInfinite = lhs.isPositiveInfinity || lhs.isNegativeInfinity
        let rightInfinite = right.isPositiveInfinity || right.isNegativeInfinity
        if lhsInfinite && rightInfinite {
            return lhs.isPositiveInfinity == right.isPositiveInfinity ? lhs : .invalid
        }
        if lhsInfinite { return lhs }
        if rightInfinite { return right }
        var rounded = lhs.hasBeenRounded || rhs.hasBeenRounded
        var timescale: Int32
        if lhs.timescale == rhs.timescale {
            timescale = lhs.timescale
        } else {
            let lcm = Self.leastCommonMultiple(Int64(lhs.timescale), Int64(rhs.timescale))
            timescale = lcm <= Int64(maxTimescale) ? Int32(lcm) : max(lhs.timescale, rhs.timescale)
        }
        // Try the chosen timescale; on overflow halve it, rounding, as CMTime does.
        while true {
            if let a = Self.rescale(lhs.value, from: Int64(lhs.timescale), to: Int64(timescale), method: .default),
               let b = Self.rescale(rhs.value, from: Int64(rhs.timescale), to: Int64(timescale), method: .default) {
                let (sum, overflow) = negateRight ? a.0.subtractingReportingOverflow(b.0) : a.0.addingReportingOverflow(b.0)
                if !overflow {
                    var result = MediaTime(value: sum, timescale: timescale)
                    if rounded || !a.1 || !b.1 { result.flags.insert(.hasBeenRounded) }
                    return result
                }
            }
            if timescale == 1 {
                let positive = (lhs.seconds + (negateRight ? -rhs.seconds : rhs.seconds)) > 0
                return positive ? .positiveInfinity : .negativeInfinity
            }
            timescale /= 2
            rounded = true
        }
    }

    static func leastCommonMultiple(_ a: Int64, _ b: Int64) -> Int64 {
        a / greatestCommonDivisor(a, b) * b
    }

    static func greatestCommonDivisor(_ a: Int64, _ b: Int64) -> Int64 {
        var (x, y) = (a.magnitude, b.magnitude)
        while y != 0 { (x, y) = (y, x % y) }
        return Int64(x)
    }

    /// This time multiplied by `multiplier / divisor`, exact unless the result overflows
    /// (then rounded to the nearest representable time at this timescale).
    public func multiplied(byRatio multiplier: Int32, dividedBy divisor: Int32) -> MediaTime {
        guard isNumeric else { return self }
        guard divisor != 0 else { return .invalid }
        // Keep the divisor positive; the sign moves to the multiplier.
        let (numerator, denominator) = divisor < 0 ? (-Int64(multiplier), -Int64(divisor)) : (Int64(multiplier), Int64(divisor))
        guard let (scaled, exact) = Self.rescale(value, from: denominator, to: numerator, method: .default) else {
            return (value >= 0) == (numerator >= 0) ? .positiveInfinity : .negativeInfinity
        }
        var result = MediaTime(value: scaled, timescale: timescale)
        if !exact || hasBeenRounded { result.flags.insert(.hasBeenRounded) }
        return result
    }
}

// MARK: - Comparison

extension MediaTime: Comparable, Hashable {
    /// Orders like `CMTimeCompare`: −∞ < numbers < +∞ < indefinite < invalid.
    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool { compare(lhs, rhs) < 0 }

    /// Equal when they denote the same instant (1/2 == 2/4), as `CMTimeCompare` says.
    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool { compare(lhs, rhs) == 0 }

    /// −1, 0 or 1, as `CMTimeCompare`.
    public static func compare(_ lhs: MediaTime, _ rhs: MediaTime) -> Int {
        let (l, r) = (lhs.orderingRank, rhs.orderingRank)
        if l != r { return l < r ? -1 : 1 }
        guard l == 1 else { return 0 }
        let left = lhs.value.multipliedFullWidth(by: Int64(rhs.timescale))
        let right = rhs.value.multipliedFullWidth(by: Int64(lhs.timescale))
        if left.high != right.high { return left.high < right.high ? -1 : 1 }
        if left.low != right.low { return left.low < right.low ? -1 : 1 }
        return 0
    }

    /// 0: −∞, 1: numeric, 2: +∞, 3: indefinite, 4: invalid.
    private var orderingRank: Int {
        if !isValid { return 4 }
        if isIndefinite { return 3 }
        if isPositiveInfinity { return 2 }
        if isNegativeInfinity { return 0 }
        return 1
    }

    /// Hashes the reduced fraction, so that equal times hash equally.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(orderingRank)
        if orderingRank == 1 {
            let divisor = Self.greatestCommonDivisor(value, Int64(timescale))
            hasher.combine(value / max(divisor, 1))
            hasher.combine(Int64(timescale) / max(divisor, 1))
        }
    }
}

extension MediaTime: CustomStringConvertible {
    /// `value/timescale = seconds s`, or the non-numeric kind.
    public var description: String {
        if !isValid { return "invalid" }
        if isIndefinite { return "indefinite" }
        if isPositiveInfinity { return "+infinity" }
        if isNegativeInfinity { return "-infinity" }
        return "\(value)/\(timescale) = \(seconds) s\(hasBeenRounded ? " (rounded)" : "")"
    }
}

/// Minimum and maximum of two times, by `CMTimeCompare`'s order.
public func min(_ a: MediaTime, _ b: MediaTime) -> MediaTime { a <= b ? a : b }
/// See `min(_:_:)`.
public func max(_ a: MediaTime, _ b: MediaTime) -> MediaTime { a >= b ? a : b }
