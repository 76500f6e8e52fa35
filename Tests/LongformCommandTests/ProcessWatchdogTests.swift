import Foundation
import LongformTestSupport
import Testing

/// The tests' watchdog: a child process past its time limit is killed, and what the test reports
/// says where its threads were, so that a hang fails one test instead of holding the whole run.
@Suite struct ProcessWatchdogTests {
    @Test func aToolPastItsTimeLimitIsKilledAndItsThreadsAreShown() throws {
        let started = Date()
        let result = try ExternalTool.run("sleep", ["60"], timeLimit: 1)
        #expect(Date().timeIntervalSince(started) < 30, "killed soon after its limit")
        #expect(result.status != 0)
        #expect(result.errorOutput.contains("was still running after 1 s and was killed"), "\(result.errorOutput)")
        #expect(result.errorOutput.contains("Thread 1 "), "gdb's stacks: \(result.errorOutput)")
    }

    @Test func aLongformProcessThatDoesNotEndShowsWhereItWaited() throws {
        let speaker = try SpeakerProcess(name: "cellar", route: "null")
        speaker.running.waitForExit(timeLimit: 1)
        #expect(!speaker.running.process.isRunning)
        // The speaker's main thread waits for a stop signal in its command's run(): named, demangled.
        #expect(speaker.output.contains("was still running after 1 s"), "\(speaker.output)")
        #expect(speaker.output.contains("SpeakerOptions.run()"), "\(speaker.output)")
    }
}
