/// A clock that runs `rate` faster than another (slower, if negative) and agrees with it at
/// `origin`: how `HostClock` gives a process a crystal of its own. A value, tested on its own.
public struct ClockSkew: Sendable, Equatable {
    /// The raw reading (ns) at which both clocks agree.
    public var origin: UInt64
    /// The skewed clock's rate over the raw one, less 1 (2e-4: 200 ppm fast).
    public var rate: Double

    /// A skew of `rate` from `origin` on.
    public init(origin: UInt64, rate: Double) {
        self.origin = origin
        self.rate = rate
    }

    /// What the skewed clock reads when the raw one reads `raw`.
    public func reading(ofRaw raw: UInt64) -> UInt64 {
        let elapsed = Int64(bitPattern: raw &- origin)
        return raw &+ UInt64(bitPattern: Int64((Double(elapsed) * rate).rounded()))
    }

    /// What the raw clock reads when the skewed one reads `reading`: the inverse of `reading(ofRaw:)`.
    public func raw(ofReading reading: UInt64) -> UInt64 {
        let elapsed = Int64(bitPattern: reading &- origin)
        return origin &+ UInt64(bitPattern: Int64((Double(elapsed) / (1 + rate)).rounded()))
    }
}
