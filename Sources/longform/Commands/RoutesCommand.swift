import ArgumentParser
import LongformLocalRouteCatalog
import LongformRouteCatalog

/// `longform routes`: what this machine can play to.
struct RoutesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "routes", abstract: "List the routes this machine offers.")

    func run() {
        for entry in RouteCatalog.availableRoutes() {
            print("\(entry.specifier.description.padding(toLength: 40, withPad: " ", startingAt: 0)) \(entry.description)")
        }
    }
}
