import LongformSpeakerProtocol

/// Where an AirPlay receiver listens for RTSP: `HOST[:PORT]` or `[IPv6][:PORT]`, port 5000 when not given.
public struct AirPlayEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// A name or an address.
    public var host: String
    /// Its RTSP port.
    public var port: Int

    /// The port AirPlay 1 receivers listen on unless they announce another.
    public static let defaultPort = 5000

    /// An endpoint.
    public init(host: String, port: Int = defaultPort) {
        self.host = host
        self.port = port
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

    /// `host:port`, with brackets around an IPv6 address.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
