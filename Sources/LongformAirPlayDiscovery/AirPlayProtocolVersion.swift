/// An AirPlay audio protocol a receiver speaks.
public enum AirPlayProtocolVersion: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// AirPlay 1 (RAOP, realtime audio over RTSP and RTP): every receiver that advertises `_raop._tcp`.
    case airPlay1 = 1
    /// AirPlay 2 (pairing, buffered audio, PTP): a receiver whose feature bits say so (`AirPlayFeatures.airPlay2Markers`).
    case airPlay2 = 2

    /// "AirPlay 1" or "AirPlay 2".
    public var description: String { "AirPlay \(rawValue)" }

    /// AirPlay 1 before AirPlay 2.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
