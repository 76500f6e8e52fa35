import Foundation

/// A sink's monitor recorded by parec as raw 16-bit samples into a file: what a listener heard.
public final class MonitorRecording {
    private let recorder = Process()
    private let path = TestAudio.path("pulse-monitor-\(UUID().uuidString.prefix(8)).raw")
    /// Interleaved channels per frame.
    public let channelCount: Int

    /// Starts parec on `source` (the test sink's monitor unless named) with `channelCount` channels
    /// (`channelMap`: PulseAudio's names for them, nil for its default), asking the server for
    /// `latencyMilliseconds` (which the sink then renders ahead at most); returns once it really
    /// captures (the monitor's silence arrives): a new stream on this VM's PulseAudio can take a
    /// second to start.
    public init(server: String, source: String = PulseAudioServer.sinkName + ".monitor", channelCount: Int = 2, channelMap: String? = nil,
                latencyMilliseconds: Int = 20) throws {
        self.channelCount = channelCount
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        recorder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        recorder.arguments = ["parec", "-d", source, "--format=s16le", "--rate=44100", "--channels=\(channelCount)", "--raw",
                              "--latency-msec=\(latencyMilliseconds)"] + (channelMap.map { ["--channel-map=\($0)"] } ?? [])
        recorder.environment = ProcessInfo.processInfo.environment.merging(["PULSE_SERVER": server]) { $1 }
        recorder.standardInput = FileHandle.nullDevice
        recorder.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try recorder.run()
        let started = Date(timeIntervalSinceNow: 5)
        while byteCount < 22_050 * channelCount && Date() < started { Thread.sleep(forTimeInterval: 0.02) }
    }

    /// A recording a failed test never finished stops here: parec holds the test's output open,
    /// and the test run would wait for it.
    deinit {
        if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) }
    }

    /// Bytes recorded so far.
    public var byteCount: Int { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }

    /// Stops parec once the file holds `bytes` (parec runs behind real time by its own start-up),
    /// or after 10 s, and returns the samples, interleaved.
    @discardableResult
    public func finish(covering bytes: Int) -> [Int32] {
        let deadline = Date(timeIntervalSinceNow: 10)
        while byteCount < bytes && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        // SIGKILL: a child of the test process inherits its blocked signal mask, so parec would
        // not see SIGINT or SIGTERM; raw output needs no header.
        kill(recorder.processIdentifier, SIGKILL)
        recorder.waitUntilExit()
        let raw = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
        try? FileManager.default.removeItem(atPath: path)
        return raw.withUnsafeBytes { bytes in bytes.bindMemory(to: Int16.self).map { Int32($0) } }
    }
}
