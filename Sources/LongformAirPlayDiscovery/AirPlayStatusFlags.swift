/// The status flags an AirPlay receiver advertises (`_raop._tcp`'s `sf`, `_airplay._tcp`'s
/// `flags`), as pyatv reads them (`pyatv/protocols/airplay/utils.py`: PIN_REQUIRED,
/// PASSWORD_BIT, LEGACY_PAIRING_BIT) and openairplay.github.io/airplay-spec/status_flags.html names them.
public struct AirPlayStatusFlags: OptionSet, Sendable, Hashable {
    /// The bits, bit 0 the lowest.
    public let rawValue: UInt64

    /// The bits `rawValue` holds.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// 0x4: an audio cable is attached (AirPort Express; shairport-sync always sets it).
    public static let audioCableAttached = AirPlayStatusFlags(rawValue: 0x4)
    /// 0x8: a PIN shown on the receiver must be entered to pair.
    public static let pinRequired = AirPlayStatusFlags(rawValue: 0x8)
    /// 0x80: a password is required.
    public static let passwordRequired = AirPlayStatusFlags(rawValue: 0x80)
    /// 0x200: pairing is required before a session (pyatv: pairing "Mandatory").
    public static let pairingRequired = AirPlayStatusFlags(rawValue: 0x200)

    /// Parses a TXT value: one hex number, the `0x` optional; nil for anything else.
    public init?(text: String) {
        let trimmed = text.filter { !$0.isWhitespace }
        let digits = trimmed.hasPrefix("0x") || trimmed.hasPrefix("0X") ? trimmed.dropFirst(2) : Substring(trimmed)
        guard !digits.isEmpty, digits.count <= 16, let value = UInt64(digits, radix: 16) else { return nil }
        rawValue = value
    }
}
