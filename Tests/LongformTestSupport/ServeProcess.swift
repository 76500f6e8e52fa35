import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `longform serve` process on a free loopback port (a `LongformProcess`).
public final class ServeProcess: @unchecked Sendable {
    /// The running command.
    public let running: LongformProcess
    /// The port it listens on, read from its "serving http://…" line.
    public let port: Int
    /// The token it printed (listening beyond loopback), if any.
    public let token: String?

    /// Starts `longform serve --http HOST:0 --state STATE --music MUSIC --route ROUTE` plus
    /// `extraArguments` (with `environment` added to this process's), and waits until it listens.
    public init(state: String, music: String, host: String = "127.0.0.1", route: String = "null", extraArguments: [String] = [],
                environment: [String: String] = [:]) throws {
        running = try LongformProcess(["serve", "--http", "\(host):0", "--state", state, "--music", music, "--route", route] + extraArguments,
                                      readyPattern: "^longform: serving http://", environment: environment)
        // "longform: serving http://HOST:PORT/[?token=T]"
        let url = running.readyLine.dropFirst("longform: serving ".count)
        guard let components = URLComponents(string: String(url)), let port = components.port else {
            throw ExternalTool.Failure(description: "no port in \(running.readyLine)")
        }
        self.port = port
        token = components.queryItems?.first { $0.name == "token" }?.value
    }

    /// The process.
    public var process: Process { running.process }
    /// What it printed so far (its log included).
    public var output: String { running.output }

    /// Sends `signalNumber` and waits for the process to end.
    public func kill(_ signalNumber: Int32 = SIGTERM) { running.kill(signalNumber) }
}
