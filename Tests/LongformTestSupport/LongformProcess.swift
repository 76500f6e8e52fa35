import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A long-running `longform` process (`serve`, `speaker`) whose output goes to a file (a pipe
/// would be held open by anything it starts and hang `Process`), started and waited for until a
/// line of its output says it is ready. Its own process, not a thread of the test: blocking test
/// code must not share its few async threads.
public final class LongformProcess: @unchecked Sendable {
    /// The process.
    public let process = Process()
    /// The first line of output that matched the pattern it was started with.
    public let readyLine: String
    /// The file its output (its log included) goes to.
    public let outputPath: String

    /// Runs `longform` with `arguments` and waits (up to 20 s) for a line that matches the regular
    /// expression `readyPattern`; throws with what it printed if it ends or stays silent. With a
    /// `wrapper` (`["ip", "netns", "exec", "NS"]`), that command runs `longform`; `environment`
    /// is added to this process's.
    public init(_ arguments: [String], readyPattern: String, wrapper: [String] = [], environment: [String: String] = [:]) throws {
        outputPath = TestAudio.path("longform-\(arguments.first ?? "run")-\(UUID().uuidString.prefix(8)).log")
        FileManager.default.createFile(atPath: outputPath, contents: nil)
        if let tool = wrapper.first {
            process.executableURL = URL(fileURLWithPath: tool.hasPrefix("/") ? tool : "/usr/bin/env")
            process.arguments = (tool.hasPrefix("/") ? Array(wrapper.dropFirst()) : wrapper) + [ExternalTool.longformExecutable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: ExternalTool.longformExecutable)
            process.arguments = arguments
        }
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        var found: String?
        while found == nil && Date() < deadline && process.isRunning {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            found = text.split(separator: "\n").first { $0.range(of: readyPattern, options: .regularExpression) != nil }.map(String.init)
            if found == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        guard let found else {
            if process.isRunning { process.terminate() }
            throw ExternalTool.Failure(description: "longform \(arguments.joined(separator: " ")) did not start: \((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")")
        }
        readyLine = found
    }

    /// What it printed so far (its log included).
    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Sends `signalNumber` and waits for the process to end, as `waitForExit(timeLimit:)` does.
    public func kill(_ signalNumber: Int32 = SIGTERM, timeLimit: TimeInterval = 60) {
        if process.isRunning { Glibc.kill(process.processIdentifier, signalNumber) }
        waitForExit(timeLimit: timeLimit)
    }

    /// Waits for the process to end, up to `timeLimit` seconds: one still running then is killed,
    /// and its output ends with where its threads were (`ProcessWatchdog`).
    public func waitForExit(timeLimit: TimeInterval = 600) {
        guard let hang = ProcessWatchdog.waitForExit(of: process, timeLimit: timeLimit),
              let file = FileHandle(forWritingAtPath: outputPath) else { return }
        file.seekToEndOfFile()
        file.write(Data(("\n" + hang + "\n").utf8))
        try? file.close()
    }
}
