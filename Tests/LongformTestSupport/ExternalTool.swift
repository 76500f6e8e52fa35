import Foundation

/// Runs Debian's tools (sox, ffmpeg, parec…) and the `longform` binary from tests.
public enum ExternalTool {
    /// What a finished process printed and returned.
    public struct Result: Sendable {
        /// The exit status.
        public var status: Int32
        /// Standard output.
        public var output: String
        /// Standard error.
        public var errorOutput: String
    }

    /// Runs `executable` (a path, or a name looked up on PATH) with `arguments` and waits for it, up
    /// to `timeLimit` seconds: a process still running then is killed, and its error output ends
    /// with where its threads were (`ProcessWatchdog`).
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                           timeLimit: TimeInterval = 600) throws -> Result {
        let process = Process()
        if executable.contains("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
        }
        var inherited = ProcessInfo.processInfo.environment
        // ProcessInfo's copy dates from the start of the process; the test PulseAudio server is set later.
        if let server = getenv("PULSE_SERVER") { inherited["PULSE_SERVER"] = String(cString: server) }
        process.environment = inherited.merging(environment) { $1 }
        // Output goes to files, not pipes: a pipe stays open as long as any descendant holds it
        // (a server started in the background), and reading it to the end would then hang.
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("longform-tool-\(UUID().uuidString)")
        let outputURL = capture.appendingPathExtension("out"), errorURL = capture.appendingPathExtension("err")
        FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outputURL)
            try? FileManager.default.removeItem(at: errorURL)
        }
        let outputHandle = try FileHandle(forWritingTo: outputURL), errorHandle = try FileHandle(forWritingTo: errorURL)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = outputHandle
        process.standardError = errorHandle
        try process.run()
        let hang = ProcessWatchdog.waitForExit(of: process, timeLimit: timeLimit)
        try? outputHandle.close()
        try? errorHandle.close()
        let errorOutput = (try? String(contentsOf: errorURL, encoding: .utf8)) ?? ""
        return Result(status: process.terminationStatus,
                      output: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "",
                      errorOutput: hang.map { errorOutput + "\n" + $0 } ?? errorOutput)
    }

    /// Runs and throws when the status is not 0.
    @discardableResult
    public static func check(_ executable: String, _ arguments: [String]) throws -> Result {
        let result = try run(executable, arguments)
        guard result.status == 0 else { throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) exited \(result.status): \(result.errorOutput)") }
        return result
    }

    /// A tool failure.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed.
        public var description: String
    }

    /// The `longform` executable built beside the test bundle.
    public static var longformExecutable: String { builtExecutable(named: "longform") }

    /// The path of the repository's `scripts/NAME` (this file lies two folders below the root).
    public static func script(named name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts").appendingPathComponent(name).path
    }

    /// The executable `name` of this package, built beside the test bundle.
    public static func builtExecutable(named name: String) -> String {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // The xctest bundle sits in the build directory (or inside a .xctest folder on Darwin).
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path) && directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(name).path
    }
}
