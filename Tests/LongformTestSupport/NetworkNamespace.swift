import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A second host for a test: a network namespace joined to this one by a veth link, with
/// 10.201.N.1 on this side and 10.201.N.2 inside. The link can be cut and restored, as a cable
/// pulled out and put back. Needs root (CI runs as root); removed when released.
public final class NetworkNamespace: @unchecked Sendable {
    /// The namespace's name.
    public let name: String
    /// This side's address.
    public let hostAddress: String
    /// The namespace's address.
    public let address: String
    private let hostInterface: String
    private let number: Int
    /// The subnet numbers this process's namespaces hold: two tests running at once drew the same
    /// one at random, and the second could not make its namespace.
    private static let numbersInUse = Mutex<Set<Int>>([])

    /// Whether this process may make namespaces.
    public static var isAvailable: Bool { geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") }

    /// Makes the namespace and its link, up.
    public init() throws {
        let number = Self.numbersInUse.withLock { used in
            var number: Int
            repeat { number = Int.random(in: 1...250) } while used.contains(number)
            used.insert(number)
            return number
        }
        self.number = number
        let tag = "\(getpid() % 10_000)\(number)"
        name = "lf-\(tag)"
        hostInterface = "lfh\(tag)"
        hostAddress = "10.201.\(number).1"
        address = "10.201.\(number).2"
        let inside = "lfn\(tag)"
        try Self.ip(["netns", "add", name])
        try Self.ip(["link", "add", hostInterface, "type", "veth", "peer", "name", inside])
        try Self.ip(["link", "set", inside, "netns", name])
        try Self.ip(["addr", "add", "\(hostAddress)/30", "dev", hostInterface])
        try Self.ip(["link", "set", hostInterface, "up"])
        // While the link is cut its own route goes: this one then drops what is sent to the
        // namespace, rather than the default route taking it off the machine.
        try Self.ip(["route", "add", "blackhole", "10.201.\(number).0/30", "metric", "4000"])
        try Self.ip(["-n", name, "addr", "add", "\(address)/30", "dev", inside])
        try Self.ip(["-n", name, "link", "set", inside, "up"])
        try Self.ip(["-n", name, "link", "set", "lo", "up"])
    }

    deinit {
        _ = try? ExternalTool.run("/usr/sbin/ip", ["route", "del", "blackhole", "\(hostAddress.dropLast(1))0/30"])
        _ = try? ExternalTool.run("/usr/sbin/ip", ["link", "del", hostInterface])
        _ = try? ExternalTool.run("/usr/sbin/ip", ["netns", "del", name])
        _ = Self.numbersInUse.withLock { $0.remove(number) }
    }

    /// What runs a command inside: `ip netns exec NAME`.
    public var wrapper: [String] { ["/usr/sbin/ip", "netns", "exec", name] }

    /// Cuts the link: nothing passes either way, and no end is told.
    public func cut() throws { try Self.ip(["link", "set", hostInterface, "down"]) }

    /// Puts the link back.
    public func restore() throws { try Self.ip(["link", "set", hostInterface, "up"]) }

    private static func ip(_ arguments: [String]) throws {
        let result = try ExternalTool.run("/usr/sbin/ip", arguments)
        guard result.status == 0 else { throw ExternalTool.Failure(description: "ip \(arguments.joined(separator: " ")): \(result.errorOutput)") }
    }
}
