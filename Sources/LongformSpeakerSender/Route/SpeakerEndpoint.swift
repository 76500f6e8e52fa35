import LongformCore
import LongformSpeakerProtocol

/// Where a network speaker listens: `HOST:PORT`, `[IPv6]:PORT`.
public struct SpeakerEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// A name or an address.
    public var host: String
    /// Its TCP port.
    public var port: Int

    /// An endpoint.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` or `[ADDRESS]:PORT`; nil when either part is missing or the port is out of range.
    public init?(parsing input: some StringProtocol) {
        guard let (host, portText) = HostAndPort.split(Substring(input)), !host.isEmpty,
              let port = Int(portText), (1...65_535).contains(port) else { return nil }
        self.init(host: String(host), port: port)
    }

    /// `host:port`, with brackets around an IPv6 address.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
