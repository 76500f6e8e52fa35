import Foundation
import LongformAirPlayDiscovery
import LongformTestSupport
import Testing

/// `AirPlayBrowser` against a real receiver's avahi-daemon: Debian's shairport-sync 3.3.8 in a
/// network namespace (`AirPlayReceiver`), its D-Bus reached through a symbolic link that
/// `DBUS_SYSTEM_BUS_ADDRESS` names while a browser connects. libdbus reads that address once a
/// process, at its first connection: the link is re-pointed for each receiver, and the variable is
/// set only while a browser is made, so that no receiver's daemons (started by other suites too) inherit it.
@Suite(.serialized, .enabled(if: AirPlayReceiver.isAvailable, "needs root, ip, shairport-sync, avahi-daemon and dbus-daemon"))
struct AirPlayBrowserTests {
    /// The link every browser of this process connects through.
    static let busLink = TestAudio.path("airplay-discovery-bus-\(getpid())")

    /// A browser connected through `busLink`.
    static func browser() throws -> AirPlayBrowser {
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=\(busLink)", 1)
        defer { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
        return try AirPlayBrowser()
    }

    /// Points the system bus at `socket`.
    static func useBus(at socket: String) throws {
        try? FileManager.default.removeItem(atPath: busLink)
        try FileManager.default.createSymbolicLink(atPath: busLink, withDestinationPath: socket)
    }

    @Test func browsingFindsTheReceiverWithItsAddressPortAndModel() throws {
        let receiver = try AirPlayReceiver(name: "Kitchen")
        let advertised = try receiver.waitUntilAdvertised()
        try Self.useBus(at: receiver.systemBusSocket())
        let started = Date()
        let records = try Self.browser().browse(for: 5)
        let record = try #require(records.first { $0.name == "Kitchen" }, "found \(records)")
        #expect(records.count == 1)
        #expect(record.addresses == [receiver.address])
        #expect(record.raopPort == receiver.port)
        #expect(record.airPlayPort == nil)
        #expect(record.model == "ShairportSync")
        #expect(record.protocols == [.airPlay1])
        #expect(!record.needsPassword)
        #expect(!record.needsPairing)
        #expect(!record.requiresFairPlay)
        #expect(record.deviceID == String(advertised.prefix { $0 != "@" }))
        // Settled ("all for now", every instance resolved) well before the 5 s.
        #expect(Date().timeIntervalSince(started) < 4, "the browse took \(Date().timeIntervalSince(started)) s")
    }

    @Test func findMatchesTheNameInAnyCaseAndReturnsOnceFound() throws {
        let receiver = try AirPlayReceiver(name: "Porch", password: "secret")
        try receiver.waitUntilAdvertised()
        try Self.useBus(at: receiver.systemBusSocket())
        let browser = try Self.browser()
        let started = Date()
        let record = try #require(try browser.find(name: "porch", timeout: 5))
        #expect(Date().timeIntervalSince(started) < 4, "find took \(Date().timeIntervalSince(started)) s")
        #expect(record.name == "Porch")
        #expect(record.needsPassword)
        #expect(record.addresses == [receiver.address])
        #expect(try browser.find(name: "Nowhere", timeout: 1) == nil)
    }

    @Test func watchingSeesTheReceiverAppearAndTheDaemonGo() throws {
        let receiver = try AirPlayReceiver(name: "Attic")
        try receiver.waitUntilAdvertised()
        try Self.useBus(at: receiver.systemBusSocket())
        let browser = try Self.browser()
        var changes: [[AirPlayReceiverRecord]] = []
        var killed: Date?
        let deadline = Date(timeIntervalSinceNow: 10)
        // Once it is seen, it is killed, and its dbus-daemon and avahi-daemon with it: the watch
        // (still running) ends with Avahi's reason.
        let error = try #require(throws: AirPlayDiscoveryError.self) {
            try browser.watch(while: { Date() < deadline }) { records in
                changes.append(records)
                if killed == nil, records.contains(where: { $0.name == "Attic" }) {
                    receiver.kill()
                    killed = Date()
                }
            }
        }
        #expect(changes.first?.map(\.name) == ["Attic"])
        #expect(error.description.hasPrefix("Avahi: browsing"), "\(error)")
        let end = try #require(killed)
        #expect(Date().timeIntervalSince(end) < 4, "the watch ended \(Date().timeIntervalSince(end)) s after the daemon")
    }

    @Test func withoutADaemonTheErrorSaysSo() throws {
        try Self.useBus(at: TestAudio.path("no-such-bus-socket"))
        #expect { try Self.browser() } throws: { error in
            (error as? AirPlayDiscoveryError)?.description.hasPrefix("Avahi: ") == true
        }
        let error = try #require(throws: AirPlayDiscoveryError.self) { try Self.browser() }
        #expect(error.description == "Avahi: Daemon not running")
    }
}
