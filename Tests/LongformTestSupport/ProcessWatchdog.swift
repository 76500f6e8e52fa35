import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Waits for a child process with a time limit. A process over it has its threads' stacks taken
/// (gdb) and is killed: a hang then fails one test with where it hung, instead of holding the whole
/// run until CI gives up on it with nothing to show.
public enum ProcessWatchdog {
    /// Waits up to `timeLimit` seconds for `process` to end. Returns nil when it ended in time, or
    /// else a description of the hang, its threads' stacks included, once it has been killed.
    public static func waitForExit(of process: Process, timeLimit: TimeInterval) -> String? {
        let deadline = Date().addingTimeInterval(timeLimit)
        // Short waits first (most tools end in milliseconds), then every 20 ms.
        var interval = 0.001
        while process.isRunning && Date() < deadline {
            Thread.sleep(forTimeInterval: interval)
            interval = min(interval * 2, 0.02)
        }
        guard process.isRunning else { return nil }
        let name = ([process.executableURL?.lastPathComponent ?? "?"] + (process.arguments ?? [])).joined(separator: " ")
        let stacks = threadStacks(ofProcess: process.processIdentifier)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let description = "\(name) (pid \(process.processIdentifier)) was still running after \(Int(timeLimit)) s and was killed; its threads:\n\(stacks)"
        FileHandle.standardError.write(Data(("ProcessWatchdog: " + description + "\n").utf8))
        return description
    }

    /// The stacks of every thread of process `pid` (`scripts/thread-stacks`: gdb, Swift names demangled).
    public static func threadStacks(ofProcess pid: Int32) -> String {
        let script = ExternalTool.script(named: "thread-stacks")
        let stacks = Process()
        stacks.executableURL = URL(fileURLWithPath: "/bin/sh")
        stacks.arguments = [script, "\(pid)"]
        let output = Pipe()
        stacks.standardOutput = output
        stacks.standardError = output
        stacks.standardInput = FileHandle.nullDevice
        guard (try? stacks.run()) != nil else { return "(\(script) could not be started)" }
        // The script ends within 40 s (gdb has 20 s a try, two tries); its output is read to the
        // end before waiting, so a full pipe cannot stall it.
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        stacks.waitUntilExit()
        return text.trimmingCharacters(in: .newlines)
    }
}
