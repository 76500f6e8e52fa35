/// The two DNS-SD services an AirPlay receiver advertises.
public enum AirPlayServiceKind: String, Sendable, Hashable, CaseIterable {
    /// `_raop._tcp`: AirPlay 1 audio (RAOP), instance named `DEVICEID@Name`.
    case raop = "_raop._tcp"
    /// `_airplay._tcp`: AirPlay (video, photos, and AirPlay 2 audio), instance named `Name`.
    case airPlay = "_airplay._tcp"

    /// The DNS-SD service type, as Avahi takes and reports it.
    public var serviceType: String { rawValue }
}
