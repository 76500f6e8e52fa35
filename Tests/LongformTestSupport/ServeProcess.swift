import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `longform serve` process on a free loopback port. Its output goes to a file: a pipe would
/// be held open by anything it starts and hang `Process`. Its own process, not a thread of the
/// test: blocking test code must not share the server's few async threads.
public final class ServeProcess: @unchecked Sendable {
    /// The process.
    public let process = Process()
    /// The port it listens on, read from its "serving http://…" line.
    public let port: Int
    /// The token it printed (listening beyond loopback), if any.
    public let token: String?
    private let outputPath: String

    /// Starts `longform serve --http HOST:0 --state STATE --music MUSIC --route null` plus
    /// `extraArguments`, and waits until it listens.
    public init(state: String, music: String, host: String = "127.0.0.1", extraArguments: [String] = []) throws {
        outputPath = TestAudio.path("serve-\(UUID().uuidString.prefix(8)).log")
        FileManager.default.createFile(atPath: outputPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: ExternalTool.longformExecutable)
        process.arguments = ["serve", "--http", "\(host):0", "--state", state, "--music", music, "--route", "null"] + extraArguments
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        var found: (port: Int, token: String?)?
        while found == nil && Date() < deadline && process.isRunning {
            found = Self.address(in: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
            if found == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        guard let found else {
            if process.isRunning { process.terminate() }
            throw HTTPTestClient.Failure(description: "serve did not start: \((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")")
        }
        port = found.port
        token = found.token
    }

    /// The port (and token) of the "longform: serving http://HOST:PORT/[?token=T]" line.
    private static func address(in output: String) -> (port: Int, token: String?)? {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("longform: serving http://") }) else { return nil }
        let url = line.dropFirst("longform: serving ".count)
        guard let components = URLComponents(string: String(url)), let port = components.port else { return nil }
        return (port, components.queryItems?.first { $0.name == "token" }?.value)
    }

    /// What it printed so far (its log included).
    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Sends `signalNumber` and waits for the process to end.
    public func kill(_ signalNumber: Int32 = SIGTERM) {
        if process.isRunning { Glibc.kill(process.processIdentifier, signalNumber) }
        process.waitUntilExit()
    }
}
