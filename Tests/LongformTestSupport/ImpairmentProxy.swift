import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `scripts/impair`, the tests' stand-in for `tc netem` (which this kernel lacks): relays TCP and
/// UDP, holding each chunk and datagram for `delay` ± `jitter` ms at random, and with a `rate`
/// sending no faster than a link of that many Mbit/s toward each host. Stopped when released.
public final class ImpairmentProxy: @unchecked Sendable {
    private let process = Process()

    /// Starts it (inside a namespace with a `wrapper`) with `LISTEN=TARGET` mappings, and waits
    /// until every listener is bound.
    public init(delay: Double, jitter: Double, rate: Double? = nil, tcp: [String] = [], udp: [String] = [], wrapper: [String] = []) throws {
        let script = ExternalTool.script(named: "impair")
        let arguments = ["--delay", "\(delay)", "--jitter", "\(jitter)"] + (rate.map { ["--rate", "\($0)"] } ?? [])
            + tcp.flatMap { ["--tcp", $0] } + udp.flatMap { ["--udp", $0] }
        let command = wrapper + ["/usr/bin/python3", script] + arguments
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // "ready" once bound; an error (a port in use) ends it first, and a proxy silent for 10 s is ended.
        let pid = process.processIdentifier
        let isReady = Mutex(false)
        DispatchQueue.global().asyncAfter(deadline: .now() + 10) { if !isReady.withLock({ $0 }) { kill(pid, SIGKILL) } }
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) { line.append(byte) }
        isReady.withLock { $0 = String(decoding: line, as: UTF8.self) == "ready" }
        guard isReady.withLock({ $0 }) else {
            process.waitUntilExit()
            let reason = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw ExternalTool.Failure(description: "scripts/impair did not start: \(reason)")
        }
    }

    deinit {
        // SIGKILL: it keeps nothing to write out, and a SIGTERM may find the signal blocked.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
