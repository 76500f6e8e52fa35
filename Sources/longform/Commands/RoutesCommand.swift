import ArgumentParser
import LongformAirPlayDiscovery
import LongformCommandSupport
import LongformLocalRouteCatalog
import LongformRouteCatalog

/// `longform routes`: what this machine can play to, then the AirPlay receivers Avahi finds.
struct RoutesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "routes", abstract: "List the routes this machine offers and the AirPlay receivers on the network.")

    /// How long the AirPlay receivers are browsed for: Avahi says "all for now" about a second after a browse starts.
    static let airPlayBrowseSeconds = 1.5

    @OptionGroup var logging: LoggingOptions

    func run() {
        // Errors only unless --verbose: the one line below says why no receiver is listed.
        logging.bootstrap(defaultLevel: .error)
        for entry in RouteCatalog.availableRoutes() {
            print(Self.line(entry.specifier.description, entry.description))
        }
        do {
            let receivers = try AirPlayBrowser().browse(for: Self.airPlayBrowseSeconds)
            if receivers.isEmpty { print("AirPlay receivers: none found in \(Self.airPlayBrowseSeconds) s") }
            for receiver in receivers { print(Self.line(receiver.routeName, Self.summary(of: receiver))) }
        } catch {
            // Not a failure of the command: the local routes are listed, and this says why AirPlay's are not.
            print("AirPlay receivers: not browsed (\(error))")
        }
    }

    /// A route's line: its name padded to 40 columns, then what it is.
    static func line(_ name: String, _ description: String) -> String {
        "\(name.padding(toLength: max(40, name.count), withPad: " ", startingAt: 0)) \(description)"
    }

    /// "10.0.0.5:5000  ShairportSync  AirPlay 1  password: no  pairing: no", and "FairPlay only" for one Longform cannot play to.
    static func summary(of receiver: AirPlayReceiverRecord) -> String {
        var fields: [String] = []
        let port = receiver.raopPort ?? receiver.airPlayPort
        if let address = receiver.preferredAddress, let port {
            fields.append(address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)")
        } else {
            fields.append(receiver.hostName)
        }
        fields.append(receiver.model ?? "model unknown")
        fields.append(receiver.protocols.isEmpty ? "no audio protocol" : receiver.protocols.map(\.description).joined(separator: ", "))
        fields.append("password: \(receiver.needsPassword ? "yes" : "no")")
        fields.append("pairing: \(receiver.needsPairing ? "yes" : "no")")
        if receiver.requiresFairPlay { fields.append("FairPlay only (not playable)") }
        return fields.joined(separator: "  ")
    }
}
