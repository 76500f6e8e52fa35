/// The 64 feature bits an AirPlay receiver advertises (`_airplay._tcp`'s `features`, `_raop._tcp`'s
/// `ft`), as pyatv names them (`pyatv/protocols/airplay/utils.py`, `AirPlayFlags`, after
/// emanuelecozzi.net/docs/airplay2/features). Only the bits discovery reads are named.
public struct AirPlayFeatures: OptionSet, Sendable, Hashable {
    /// The 64 bits, bit 0 the lowest of the first hex word.
    public let rawValue: UInt64

    /// The bits `rawValue` holds.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Bit 9: plays audio.
    public static let supportsAudio = AirPlayFeatures(rawValue: 1 << 9)
    /// Bit 14: FairPlay authentication ("Authentication_4").
    public static let fairPlayAuthentication = AirPlayFeatures(rawValue: 1 << 14)
    /// Bit 23: RSA authentication, the first AirPort Expresses' ("Authentication_1").
    public static let rsaAuthentication = AirPlayFeatures(rawValue: 1 << 23)
    /// Bit 26: MFi authentication ("Authentication_8").
    public static let mfiAuthentication = AirPlayFeatures(rawValue: 1 << 26)
    /// Bit 27: legacy (PIN) pairing.
    public static let supportsLegacyPairing = AirPlayFeatures(rawValue: 1 << 27)
    /// Bit 38: unified media control, which only AirPlay 2 receivers advertise (pyatv's AirPlay 2 test).
    public static let supportsUnifiedMediaControl = AirPlayFeatures(rawValue: 1 << 38)
    /// Bit 40: buffered audio (stream type 103), AirPlay 2's.
    public static let supportsBufferedAudio = AirPlayFeatures(rawValue: 1 << 40)
    /// Bit 41: PTP timing, AirPlay 2's.
    public static let supportsPTP = AirPlayFeatures(rawValue: 1 << 41)
    /// Bit 46: HomeKit pairing and access control.
    public static let supportsHomeKitPairing = AirPlayFeatures(rawValue: 1 << 46)
    /// Bit 48: CoreUtils pairing and encryption, on which AirPlay 2's transient pairing (no PIN) runs.
    public static let supportsCoreUtilsPairing = AirPlayFeatures(rawValue: 1 << 48)

    /// The bits any one of which marks an AirPlay 2 receiver: pyatv's rule (38 or 48,
    /// `get_protocol_version`) and buffered audio (40), which no AirPlay 1 receiver has.
    public static let airPlay2Markers: AirPlayFeatures = [.supportsUnifiedMediaControl, .supportsBufferedAudio, .supportsCoreUtilsPairing]

    /// The pairing bits: a receiver with either can be paired with instead of authenticated by FairPlay.
    public static let pairing: AirPlayFeatures = [.supportsHomeKitPairing, .supportsCoreUtilsPairing]

    /// Parses a TXT value: `0xLOW,0xHIGH` (two 32-bit words, the low one first) or one hex number
    /// (up to 64 bits), the `0x` optional, any case; nil for anything else (a feature list that
    /// cannot be read says nothing, rather than "no features").
    public init?(text: String) {
        let words = text.filter { !$0.isWhitespace }.split(separator: ",", omittingEmptySubsequences: false)
        func hex(_ word: Substring, maximumDigits: Int) -> UInt64? {
            let digits = word.hasPrefix("0x") || word.hasPrefix("0X") ? word.dropFirst(2) : word
            guard !digits.isEmpty, digits.count <= maximumDigits else { return nil }
            return UInt64(digits, radix: 16)
        }
        switch words.count {
        case 1:
            guard let value = hex(words[0], maximumDigits: 16) else { return nil }
            rawValue = value
        case 2:
            guard let low = hex(words[0], maximumDigits: 8), let high = hex(words[1], maximumDigits: 8) else { return nil }
            rawValue = high << 32 | low
        default:
            return nil
        }
    }
}
