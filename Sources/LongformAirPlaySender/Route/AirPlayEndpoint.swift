import LongformSpeakerProtocol

/// A receiver as the route names it: `NAME` (as it announces itself over mDNS, or a host name),
/// `HOST[:PORT]` or `[IPv6][:PORT]`; port 5000 when not given and not announced.
public struct AirPlayEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// A receiver's name, a host name or an address.
    public var host: String
    /// Its RTSP port.
    public var port: Int
    /// Whether the port was given (else a receiver found by name is reached on the port it announces).
    public var isPortGiven: Bool

    /// The port AirPlay 1 receivers listen on unless they announce another.
    public static let defaultPort = 5000

    /// An endpoint.
    public init(host: String, port: Int? = nil) {
        self.host = host
        self.port = port ?? Self.defaultPort
        isPortGiven = port != nil
    }

    /// Parses `HOST`, `HOST:PORT`, `[ADDRESS]` or `[ADDRESS]:PORT`; nil when the host is empty or the port out of range.
    public init?(parsing input: some StringProtocol) {
        let text = Substring(input)
        if let (host, portText) = HostAndPort.split(text) {
            guard !host.isEmpty, let port = Int(portText), (1...65_535).contains(port) else { return nil }
            self.init(host: String(host), port: port)
        } else if text.hasPrefix("["), text.hasSuffix("]"), text.count > 2 {
            self.init(host: String(text.dropFirst().dropLast()))
        } else {
            guard !text.isEmpty, !text.contains(":"), !text.contains("[") else { return nil }
            self.init(host: String(text))
        }
    }

    /// Whether `host` is a numeric address (never looked up by name).
    public var isNumericAddress: Bool {
        host.contains(":") || (host.split(separator: ".").count == 4 && host.split(separator: ".").allSatisfy { UInt8($0) != nil })
    }

    /// `host:port` (`host` alone when no port was given), with brackets around an IPv6 address.
    public var description: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return isPortGiven ? "\(shown):\(port)" : shown
    }
}
