import Foundation
import LongformTestSupport
import Testing

/// `longform routes` lists the AirPlay receivers Avahi finds: run inside a real receiver's
/// namespaces (`AirPlayReceiver.command`), so that it asks that receiver's avahi-daemon, not the host's.
@Suite(.serialized, .enabled(if: AirPlayReceiver.isAvailable, "needs root, ip, shairport-sync, avahi-daemon and dbus-daemon"))
struct RoutesCommandTests {
    /// `longform routes` run in `receiver`'s namespaces: its status and the line naming `airplay:NAME`.
    static func routes(seenBy receiver: AirPlayReceiver) throws -> (status: Int32, output: String, line: String?) {
        try receiver.waitUntilAdvertised()
        let command = try receiver.command([ExternalTool.longformExecutable, "routes"])
        let result = try ExternalTool.run(command[0], Array(command.dropFirst()), timeLimit: 60)
        let line = result.output.split(separator: "\n").first { $0.hasPrefix("airplay:\(receiver.name) ") }.map(String.init)
        return (result.status, result.output + result.errorOutput, line)
    }

    @Test func routesListsTheReceiverByNameWithItsAddressModelAndProtocol() throws {
        let receiver = try AirPlayReceiver(name: "Kitchen")
        let (status, output, line) = try Self.routes(seenBy: receiver)
        #expect(status == 0, "\(output)")
        let listed = try #require(line, "no airplay:Kitchen line in:\n\(output)")
        #expect(listed.contains(" \(receiver.address):5000 "), "\(listed)")
        #expect(listed.contains("  ShairportSync  "), "\(listed)")
        #expect(listed.contains("  AirPlay 1  "), "\(listed)")
        #expect(!listed.contains("AirPlay 2"), "\(listed)")
        #expect(listed.contains("password: no"), "\(listed)")
        #expect(listed.contains("pairing: no"), "\(listed)")
        // The local routes come first, as before.
        #expect(output.hasPrefix("null ") || output.contains("\nnull "), "\(output)")
    }

    @Test func aReceiverWithAPasswordIsListedAsAskingForOne() throws {
        let receiver = try AirPlayReceiver(name: "Kitchen", password: "secret")
        let (status, output, line) = try Self.routes(seenBy: receiver)
        #expect(status == 0, "\(output)")
        let listed = try #require(line, "no airplay:Kitchen line in:\n\(output)")
        #expect(listed.contains("password: yes"), "\(listed)")
    }

    /// Without an Avahi daemon (an empty /run in a mount namespace of its own: no system bus), one line says so and the status is 0.
    @Test func withoutAvahiOneLineSaysSoAndTheStatusIsZero() throws {
        let result = try ExternalTool.run("/usr/bin/unshare", ["--mount", "/bin/sh", "-c", "mount -n -t tmpfs longform-no-avahi /run && exec \"$0\" routes",
                                                              ExternalTool.longformExecutable], timeLimit: 60)
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output.contains("\nAirPlay receivers: not browsed (Avahi: Daemon not running)\n"), "\(result.output)")
        #expect(result.output.contains("null "), "\(result.output)")
    }
}
