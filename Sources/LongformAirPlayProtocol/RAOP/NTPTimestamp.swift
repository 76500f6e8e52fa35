/// A time in NTP's 64-bit format (seconds and a binary fraction), as RAOP's timing and sync
/// packets carry it. The sender's timeline is the host clock: the receiver only measures its
/// offset to it, so any epoch serves; the host clock's nanoseconds are shifted by NTP's
/// 1900-to-1970 seconds so that values look like NTP.
public struct NTPTimestamp: Sendable, Equatable, Comparable {
    /// Whole seconds.
    public var seconds: UInt32
    /// The fraction of a second, in units of 2^-32 s.
    public var fraction: UInt32

    /// Seconds from 1900 to 1970.
    static let epochOffsetSeconds: UInt64 = 2_208_988_800

    /// A timestamp from its two halves.
    public init(seconds: UInt32, fraction: UInt32) {
        self.seconds = seconds
        self.fraction = fraction
    }

    /// The timestamp of host time `hostTime` (nanoseconds).
    public init(hostTime: UInt64) {
        let whole = hostTime / 1_000_000_000
        let nanoseconds = hostTime % 1_000_000_000
        seconds = UInt32(truncatingIfNeeded: whole + Self.epochOffsetSeconds)
        fraction = UInt32(truncatingIfNeeded: (nanoseconds << 32) / 1_000_000_000)
    }

    /// The host time it stands for (nanoseconds), for a timestamp made by `init(hostTime:)`.
    public var hostTime: UInt64 {
        let whole = UInt64(seconds) &- Self.epochOffsetSeconds
        return whole &* 1_000_000_000 &+ (UInt64(fraction) * 1_000_000_000 + (1 << 31)) >> 32
    }

    /// The 64-bit value: seconds in the high half.
    public var rawValue: UInt64 { UInt64(seconds) << 32 | UInt64(fraction) }

    /// The timestamp of a 64-bit value.
    public init(rawValue: UInt64) { self.init(seconds: UInt32(rawValue >> 32), fraction: UInt32(truncatingIfNeeded: rawValue)) }

    /// Earlier first.
    public static func < (lhs: NTPTimestamp, rhs: NTPTimestamp) -> Bool { lhs.rawValue < rhs.rawValue }
}
