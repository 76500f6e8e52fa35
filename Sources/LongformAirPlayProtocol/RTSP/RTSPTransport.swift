/// The ports a receiver's `SETUP` answer names in its `Transport` header
/// (`RTP/AVP/UDP;unicast;mode=record;server_port=6103;control_port=6101;timing_port=6102`).
public struct RTSPTransport: Sendable, Equatable {
    /// Where the audio packets go.
    public var serverPort: Int
    /// Where sync packets and resent packets go, and resend requests come from.
    public var controlPort: Int
    /// Where the receiver's timing requests come from (0 when it does not say).
    public var timingPort: Int

    /// The ports.
    public init(serverPort: Int, controlPort: Int, timingPort: Int) {
        self.serverPort = serverPort
        self.controlPort = controlPort
        self.timingPort = timingPort
    }

    /// Reads the header's `server_port` and `control_port` (both needed) and `timing_port`.
    public init(parsing header: String) throws(AirPlayProtocolError) {
        var ports: [String: Int] = [:]
        for field in header.split(separator: ";") {
            let pair = field.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            if let port = Int(pair[1].trimmingSpaces()), (1...65_535).contains(port) { ports[pair[0].trimmingSpaces().lowercased()] = port }
        }
        guard let server = ports["server_port"], let control = ports["control_port"] else {
            throw .missingHeader("Transport (server_port and control_port) in '\(header.prefix(120))'")
        }
        self.init(serverPort: server, controlPort: control, timingPort: ports["timing_port"] ?? 0)
    }

    /// The `Transport` header of the sender's `SETUP`: its own control and timing ports.
    public static func request(controlPort: Int, timingPort: Int) -> String {
        "RTP/AVP/UDP;unicast;interleaved=0-1;mode=record;control_port=\(controlPort);timing_port=\(timingPort)"
    }
}
