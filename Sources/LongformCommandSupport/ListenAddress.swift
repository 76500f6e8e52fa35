import ArgumentParser
import LongformCore
import LongformSpeakerProtocol

/// Where a daemon listens, as `--http` and `--listen` take it: `HOST:PORT`, `[IPv6]:PORT`, or
/// `PORT` alone (on 127.0.0.1).
public struct ListenAddress: Sendable {
    /// The host or address, without brackets.
    public var host: String
    /// The TCP port (0: any free one).
    public var port: Int

    /// Parses `text`; the error names `option` and what it was given.
    public init(parsing text: String, option: String) throws {
        let host: Substring
        let portText: Substring
        if let port = Int(text) {
            host = "127.0.0.1"
            portText = Substring(String(port))
        } else if let parts = HostAndPort.split(Substring(text)) {
            (host, portText) = parts
        } else {
            throw ValidationError("\(option) \(text): give HOST:PORT, [IPv6]:PORT or PORT")
        }
        guard !host.isEmpty, let port = Int(portText), (0...65_535).contains(port) else {
            throw ValidationError("\(option) \(text): give HOST:PORT with a port from 0 to 65535")
        }
        self.host = String(host)
        self.port = port
    }
}
