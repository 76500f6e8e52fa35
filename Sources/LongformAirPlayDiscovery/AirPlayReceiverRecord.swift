/// An AirPlay receiver as discovery found it: its services merged into one device.
public struct AirPlayReceiverRecord: Sendable, Equatable {
    /// The name users see and address it by (`airplay:NAME`): "Kitchen", not "33FA00A66F2E@Kitchen".
    public var name: String
    /// The device ID (its MAC address as 12 upper-case hex digits), if it advertised one.
    public var deviceID: String?
    /// The host name its services point at (`Kitchen.local`).
    public var hostName: String
    /// Its addresses, IPv4 before IPv6, each once, in the order they were resolved.
    public var addresses: [String]
    /// The RAOP (AirPlay 1) port, if it advertises `_raop._tcp`.
    public var raopPort: Int?
    /// The AirPlay port, if it advertises `_airplay._tcp`.
    public var airPlayPort: Int?
    /// The model (TXT `am` or `model`: "ShairportSync", "AudioAccessory5,1"), if advertised.
    public var model: String?
    /// The audio protocols it speaks, AirPlay 1 first.
    public var protocols: [AirPlayProtocolVersion]
    /// Whether it asks for a password (any of its services' TXT says so).
    public var needsPassword: Bool
    /// Whether the user must pair with it first (a PIN; status flags 0x8 or 0x200).
    public var needsPairing: Bool
    /// Whether it takes FairPlay-encrypted sessions only (`AirPlayServiceText.requiresFairPlay`), which Longform cannot send.
    public var requiresFairPlay: Bool

    /// A record of these values.
    public init(name: String, deviceID: String?, hostName: String, addresses: [String], raopPort: Int?, airPlayPort: Int?, model: String?,
                protocols: [AirPlayProtocolVersion], needsPassword: Bool, needsPairing: Bool, requiresFairPlay: Bool) {
        self.name = name
        self.deviceID = deviceID
        self.hostName = hostName
        self.addresses = addresses
        self.raopPort = raopPort
        self.airPlayPort = airPlayPort
        self.model = model
        self.protocols = protocols
        self.needsPassword = needsPassword
        self.needsPairing = needsPairing
        self.requiresFairPlay = requiresFairPlay
    }

    /// What `--route` would name it by: `airplay:NAME`.
    public var routeName: String { "airplay:\(name)" }

    /// The address to connect to: the first IPv4 one, else the first.
    public var preferredAddress: String? { addresses.first }

    /// The devices `instances` describe, sorted by name (case-insensitively): the services of one
    /// device (the same device ID, else the same name ignoring case) merged, each address once.
    public static func merging(_ instances: [AirPlayServiceInstance]) -> [AirPlayReceiverRecord] {
        // Groups by device ID where one is known; an instance without one joins the group of the
        // same name (shairport-sync 3.3.8's RAOP TXT has no deviceid, but its instance name does).
        var groups: [[AirPlayServiceInstance]] = []
        var groupOfDevice: [String: Int] = [:], groupOfName: [String: Int] = [:]
        for instance in instances {
            let nameKey = instance.displayName.lowercased()
            let index: Int
            if let id = instance.deviceID, let existing = groupOfDevice[id] {
                index = existing
            } else if let existing = groupOfName[nameKey], instance.deviceID == nil || groups[existing].allSatisfy({ $0.deviceID == nil || $0.deviceID == instance.deviceID }) {
                index = existing
            } else {
                index = groups.count
                groups.append([])
            }
            groups[index].append(instance)
            if let id = instance.deviceID { groupOfDevice[id] = index }
            if groupOfName[nameKey] == nil { groupOfName[nameKey] = index }
        }
        return groups.map(record(of:)).sorted { ($0.name.lowercased(), $0.name) < ($1.name.lowercased(), $1.name) }
    }

    /// One device's record from its (non-empty) instances.
    private static func record(of instances: [AirPlayServiceInstance]) -> AirPlayReceiverRecord {
        let raop = instances.filter { $0.kind == .raop }, airPlay = instances.filter { $0.kind == .airPlay }
        // The AirPlay service's name where there is one: it is the device's own, without a prefix.
        let named = airPlay.first ?? instances[0]
        var addresses: [String] = []
        for address in instances.map(\.address).filter({ !$0.contains(":") }) + instances.map(\.address).filter({ $0.contains(":") })
        where !addresses.contains(address) {
            addresses.append(address)
        }
        var protocols: [AirPlayProtocolVersion] = []
        if !raop.isEmpty { protocols.append(.airPlay1) }
        if instances.contains(where: { $0.text.advertisesAirPlay2 }) { protocols.append(.airPlay2) }
        let texts = instances.map(\.text)
        return AirPlayReceiverRecord(
            name: named.displayName,
            deviceID: instances.lazy.compactMap(\.deviceID).first,
            hostName: named.hostName,
            addresses: addresses,
            raopPort: raop.first?.port,
            airPlayPort: airPlay.first?.port,
            model: (raop + airPlay).lazy.compactMap(\.text.model).first,
            protocols: protocols,
            needsPassword: texts.contains { $0.requiresPassword },
            needsPairing: texts.contains { $0.requiresPairing },
            // FairPlay is RAOP's encryption: judged on the RAOP record and the device's features.
            requiresFairPlay: raop.contains { $0.text.requiresFairPlay } && !instances.contains { !($0.text.features ?? []).isDisjoint(with: AirPlayFeatures.pairing) })
    }
}
