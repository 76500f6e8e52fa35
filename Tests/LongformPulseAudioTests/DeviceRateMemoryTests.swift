import Foundation
import LongformRoutes
import Testing

/// A device's rate kept across runs (`DeviceRateMemory`): what is written is read back, what is
/// not a rate is ignored, and the schedule writes a device that keeps its rate rarely.
@Suite struct DeviceRateMemoryTests {
    /// A memory in a directory of its own, not yet created.
    static func memory() -> DeviceRateMemory {
        DeviceRateMemory(directory: NSTemporaryDirectory() + "device-rates-\(UUID().uuidString)/rates")
    }

    @Test func aRateRememberedIsReadBackForItsDeviceOnly() {
        let memory = Self.memory()
        #expect(memory.rate(ofDevice: "pulse /run/pulse/native room-a 44100 Hz") == nil)
        memory.remember(1 + 41.3e-6, ofDevice: "pulse /run/pulse/native room-a 44100 Hz")
        memory.remember(1 - 12e-6, ofDevice: "pulse /run/pulse/native room-b 44100 Hz")
        memory.waitUntilWritten()
        let a = memory.rate(ofDevice: "pulse /run/pulse/native room-a 44100 Hz"), b = memory.rate(ofDevice: "pulse /run/pulse/native room-b 44100 Hz")
        #expect(a.map { abs($0 - (1 + 41.3e-6)) < 1e-9 } ?? false, "room a: \(String(describing: a))")
        #expect(b.map { abs($0 - (1 - 12e-6)) < 1e-9 } ?? false, "room b: \(String(describing: b))")
        // Another device whose name reads the same as a file's name (every other character an underscore).
        #expect(memory.rate(ofDevice: "pulse /run/pulse/native room_a 44100 Hz") == nil)
        // Written again, the newer rate.
        memory.remember(1 + 40.1e-6, ofDevice: "pulse /run/pulse/native room-a 44100 Hz")
        memory.waitUntilWritten()
        #expect(memory.rate(ofDevice: "pulse /run/pulse/native room-a 44100 Hz").map { abs($0 - (1 + 40.1e-6)) < 1e-9 } ?? false)
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: memory.directory))?.filter { $0.hasSuffix(".tmp") }
        #expect(leftovers == [], "temporary files left: \(String(describing: leftovers))")
    }

    @Test func aFileThatHoldsNoRateIsIgnoredAndARateNoDeviceHasIsNotKept() throws {
        let memory = Self.memory()
        memory.remember(1.002, ofDevice: "far off")
        memory.remember(.nan, ofDevice: "not a number")
        memory.waitUntilWritten()
        #expect(!FileManager.default.fileExists(atPath: memory.directory), "a directory made for rates not kept")
        memory.remember(1 + 5e-6, ofDevice: "garbled")
        memory.waitUntilWritten()
        let file = memory.directory + "/garbled"
        for garbage in ["", "fast\ngarbled\n", "+5000.000\ngarbled\n", "+5.000"] {
            try garbage.write(toFile: file, atomically: true, encoding: .utf8)
            #expect(memory.rate(ofDevice: "garbled") == nil, "read from \(garbage.debugDescription)")
        }
    }

    @Test func aDirectoryThatCannotBeMadeLosesTheRateAndNothingElse() throws {
        let blocker = NSTemporaryDirectory() + "device-rates-\(UUID().uuidString)"
        try "a file, not a directory".write(toFile: blocker, atomically: true, encoding: .utf8)
        let memory = DeviceRateMemory(directory: blocker + "/rates")
        memory.remember(1 + 5e-6, ofDevice: "device")
        memory.waitUntilWritten()
        #expect(memory.rate(ofDevice: "device") == nil)
        #expect(try String(contentsOfFile: blocker, encoding: .utf8) == "a file, not a directory")
    }

    @Test func aRelativeDirectoryIsTheWorkingDirectorysOwn() throws {
        // (The package's build folder, relative to the tests' working directory, the package's.)
        let relative = ".build/device-rates-\(UUID().uuidString.prefix(8))/rates"
        let memory = DeviceRateMemory(directory: relative)
        memory.remember(1 + 5e-6, ofDevice: "device")
        memory.waitUntilWritten()
        let absolute = FileManager.default.currentDirectoryPath + "/" + relative
        #expect(FileManager.default.fileExists(atPath: absolute + "/device"), "no file in \(absolute)")
        #expect(memory.rate(ofDevice: "device").map { abs($0 - (1 + 5e-6)) < 1e-9 } ?? false)
        try? FileManager.default.removeItem(atPath: (absolute as NSString).deletingLastPathComponent)
    }

    @Test func theScheduleWritesTheFirstRateThenMovesAtMostEveryTenSeconds() {
        var schedule = DeviceRateMemory.Schedule()
        let second: UInt64 = 1_000_000_000
        // The first; moved, but too soon; then not moved enough; then both.
        let written = [(41.0, 5), (43.0, 9), (41.2, 30), (43.0, 30)].map { schedule.shouldRemember(1 + $0.0 * 1e-6, at: UInt64($0.1) * second) }
        #expect(written == [true, false, false, true])
        #expect(!schedule.hasChanged(1 + 43.1e-6))
        #expect(schedule.hasChanged(1 + 44e-6))
        #expect(DeviceRateMemory.Schedule().hasChanged(1))
    }
}
