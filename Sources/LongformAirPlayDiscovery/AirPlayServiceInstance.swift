/// One resolved DNS-SD service of a receiver: what Avahi reported for one service type on one
/// interface and address family.
public struct AirPlayServiceInstance: Sendable, Equatable {
    /// Which service.
    public var kind: AirPlayServiceKind
    /// The DNS-SD instance name, as advertised (`5855CA1AE288@Apple TV` for RAOP, `Apple TV` for AirPlay).
    public var instanceName: String
    /// The host name its SRV record names (`Kitchen.local`).
    public var hostName: String
    /// The address it resolved to (`10.0.0.5`, `fe80::1`).
    public var address: String
    /// The TCP port its SRV record names.
    public var port: Int
    /// Its TXT record.
    public var text: AirPlayServiceText

    /// An instance as resolved.
    public init(kind: AirPlayServiceKind, instanceName: String, hostName: String, address: String, port: Int, text: AirPlayServiceText) {
        self.kind = kind
        self.instanceName = instanceName
        self.hostName = hostName
        self.address = address
        self.port = port
        self.text = text
    }

    /// The name shown to users: a RAOP instance's part after its `DEVICEID@` (an
    /// `_airplay._tcp` instance's name is that already).
    public var displayName: String {
        guard kind == .raop, let at = instanceName.firstIndex(of: "@"), instanceName.index(after: at) < instanceName.endIndex else { return instanceName }
        return String(instanceName[instanceName.index(after: at)...])
    }

    /// The device ID (12 upper-case hex digits): the TXT `deviceid`, else a RAOP instance name's part before `@` if it is a MAC address.
    public var deviceID: String? {
        if let id = text.deviceID { return id }
        guard kind == .raop, let at = instanceName.firstIndex(of: "@") else { return nil }
        return AirPlayServiceText.normalizedDeviceID(String(instanceName[..<at]))
    }
}
