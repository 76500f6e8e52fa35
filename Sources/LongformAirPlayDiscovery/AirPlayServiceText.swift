/// A receiver's DNS-SD TXT record, read as values: what the record says, nothing looked up.
///
/// Invariant: keys are lower-cased and the first occurrence of a key wins, as RFC 6763 §6.4 and
/// §6.5 say (keys are case-insensitive; a repeated key is ignored); a key without `=` is present with
/// the value "" (a boolean attribute).
public struct AirPlayServiceText: Sendable, Equatable {
    /// Every key (lower-cased) and its value.
    public let values: [String: String]

    /// Reads the record's strings, each `key=value` (or `key`) as Avahi hands them over.
    public init(_ entries: [String]) {
        var values: [String: String] = [:]
        for entry in entries {
            let key: Substring, value: Substring
            if let equals = entry.firstIndex(of: "=") {
                key = entry[..<equals]
                value = entry[entry.index(after: equals)...]
            } else {
                key = Substring(entry)
                value = ""
            }
            // An empty key is not a key (RFC 6763 §6.4): such a string is skipped.
            guard !key.isEmpty else { continue }
            let lowered = key.lowercased()
            if values[lowered] == nil { values[lowered] = String(value) }
        }
        self.values = values
    }

    /// The value of `key` (any case), nil if the record has no such key.
    public subscript(key: String) -> String? { values[key.lowercased()] }

    /// The device model: `am` (`_raop._tcp`) or `model` (`_airplay._tcp`), e.g. "AppleTV3,2", "ShairportSync".
    public var model: String? { nonEmpty("am") ?? nonEmpty("model") }

    /// The feature bits: `ft` (`_raop._tcp`) or `features` (`_airplay._tcp`); nil if absent or unreadable.
    public var features: AirPlayFeatures? { (self["ft"] ?? self["features"]).flatMap(AirPlayFeatures.init(text:)) }

    /// The status flags: `sf` (`_raop._tcp`) or `flags` (`_airplay._tcp`); nil if absent or unreadable.
    public var statusFlags: AirPlayStatusFlags? { (self["sf"] ?? self["flags"]).flatMap(AirPlayStatusFlags.init(text:)) }

    /// The encryption types `et` lists (0 none, 1 RSA, 3 FairPlay, 4 MFi-SAP, 5 FairPlay SAP v2.5); nil if absent.
    public var encryptionTypes: [Int]? {
        guard let text = self["et"] else { return nil }
        return text.split(separator: ",").compactMap { Int($0.filter { !$0.isWhitespace }) }
    }

    /// The device ID as 12 upper-case hex digits (`deviceid=58:55:CA:1A:E2:88` → "5855CA1AE288"); nil if absent or not a MAC address.
    public var deviceID: String? { self["deviceid"].flatMap(Self.normalizedDeviceID) }

    /// Whether a password is asked for: `pw` true (`true`, `yes` or `1`, any case), or the status flags' 0x80 (pyatv's `is_password_required`).
    public var requiresPassword: Bool {
        if let password = self["pw"], ["true", "yes", "1"].contains(password.lowercased()) { return true }
        return statusFlags?.contains(.passwordRequired) ?? false
    }

    /// Whether the user must pair first: the status flags' 0x8 (PIN) or 0x200 (pyatv's `get_pairing_requirement`).
    public var requiresPairing: Bool {
        guard let statusFlags else { return false }
        return !statusFlags.isDisjoint(with: [.pinRequired, .pairingRequired])
    }

    /// The AirPlay 2 marker bits (`AirPlayFeatures.airPlay2Markers`) in the features.
    public var advertisesAirPlay2: Bool { !(features ?? []).isDisjoint(with: AirPlayFeatures.airPlay2Markers) }

    /// Whether every encryption type `et` lists is FairPlay's (3 or 5) and the features offer no
    /// pairing (bits 46, 48) to get around it: conservative, so that an unknown record is never
    /// called unplayable. A receiver that also takes 0 (none), 1 (RSA) or 4 (MFi-SAP) may be played to.
    public var requiresFairPlay: Bool {
        guard let types = encryptionTypes, !types.isEmpty, types.allSatisfy({ $0 == 3 || $0 == 5 }) else { return false }
        return (features ?? []).isDisjoint(with: AirPlayFeatures.pairing)
    }

    /// `text` as 12 upper-case hex digits if it is a MAC address, with or without `:` or `-` between bytes.
    public static func normalizedDeviceID(_ text: String) -> String? {
        let digits = text.filter { $0 != ":" && $0 != "-" }.uppercased()
        guard digits.count == 12, digits.allSatisfy(\.isHexDigit) else { return nil }
        return digits
    }

    /// The value of `key` unless absent or empty.
    private func nonEmpty(_ key: String) -> String? {
        guard let value = self[key], !value.isEmpty else { return nil }
        return value
    }
}
