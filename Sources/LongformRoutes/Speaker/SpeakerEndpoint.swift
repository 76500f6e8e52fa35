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
        let text = Substring(input)
        let hostPart: Substring, portPart: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portPart = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        guard !hostPart.isEmpty, !hostPart.contains(":") || text.hasPrefix("["), let port = Int(portPart), (1...65_535).contains(port) else { return nil }
        self.init(host: String(hostPart), port: port)
    }

    /// `host:port`, with brackets around an IPv6 address.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
