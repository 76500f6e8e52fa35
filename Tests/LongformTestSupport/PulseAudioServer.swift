import Foundation

/// A real PulseAudio server for the tests, with two null sinks, on a private socket: `longform_test`,
/// whose monitor tests record, and `longform_shared`, the default, for tests that only play. Started
/// once per test process (again if it has left); it exits by itself 30 s after its last client.
///
/// The sink does not rewind (`norewinds=1`), so that its monitor is a faithful listener: a sink
/// that rewinds plays again what it rewound, but its monitor has already handed the first version
/// of that stretch to the recorder and drops the second, so frames that were played would be
/// missing from the recording (up to a block of the sink's, 5 ms under a 5 ms recorder).
public enum PulseAudioServer {
    /// The sink tests that record what is heard play to; record its monitor with
    /// `parec -d longform_test.monitor`. One suite at a time plays to it (`.serialized`).
    public static let sinkName = "longform_test"
    /// The sink tests play to when they record nothing, and the server's default: a stream of
    /// theirs in `sinkName` mixed into another test's recording (a server test's, in CI).
    public static let sharedSinkName = "longform_shared"

    private static let lock = NSLock()
    nonisolated(unsafe) private static var server: String?

    /// Starts the server if needed, points PULSE_SERVER at it for this process, and returns its address.
    public static func start() throws -> String {
        lock.lock()
        defer { lock.unlock() }
        // The server leaves 30 s after its last client: on a slow run it may be gone, and is started again.
        if let server, (try? ExternalTool.run("pactl", ["--server", server, "info"]))?.status == 0 {
            setenv("PULSE_SERVER", server, 1)
            return server
        }
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("longform-pulse-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        let socket = runtime.appendingPathComponent("native").path
        let log = runtime.appendingPathComponent("pulseaudio.log").path
        // Started detached through the shell: a long-lived child that Foundation tracks keeps other
        // children's pipes from closing, which hangs every later `Process` in the test run.
        let command = "XDG_RUNTIME_DIR='\(runtime.path)' HOME='\(runtime.path)' pulseaudio --daemonize=no -n --exit-idle-time=30 --disallow-exit --use-pid-file=no"
            + " --load='module-null-sink sink_name=\(sharedSinkName) rate=44100 channels=2'"
            + " --load='module-null-sink sink_name=\(sinkName) rate=44100 channels=2 norewinds=1'"
            + " --load='module-native-protocol-unix socket=\(socket) auth-anonymous=1'"
            + " --log-level=info </dev/null >'\(log)' 2>&1 &"
        try? FileManager.default.removeItem(atPath: socket)
        try ExternalTool.check("/bin/sh", ["-c", command])
        let address = "unix:" + socket
        let deadline = Date(timeIntervalSinceNow: 10)
        while !FileManager.default.fileExists(atPath: socket) {
            guard Date() < deadline else {
                throw ExternalTool.Failure(description: "pulseaudio did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
            usleep(50_000)
        }
        _ = try ExternalTool.check("pactl", ["--server", address, "set-default-sink", sharedSinkName])
        setenv("PULSE_SERVER", address, 1)
        server = address
        return address
    }

    /// Has `server` kill every playback stream on `sink`, as `pactl kill-sink-input` does (and as
    /// a sink that goes away does): each stream's client sees it fail. Returns how many it killed.
    @discardableResult
    public static func killStreams(on sink: String, server: String) throws -> Int {
        // `pactl list short`: tab-separated, the index first; a sink input's second field is its sink's index.
        func rows(_ kind: String) throws -> [[String]] {
            try ExternalTool.check("pactl", ["--server", server, "list", "short", kind]).output
                .split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        }
        guard let sinkIndex = try rows("sinks").first(where: { $0.count > 1 && $0[1] == sink })?.first else {
            throw ExternalTool.Failure(description: "no sink \(sink) on \(server)")
        }
        let streams = try rows("sink-inputs").filter { $0.count > 1 && $0[1] == sinkIndex }.map { $0[0] }
        guard !streams.isEmpty else { return 0 }
        // pactl has no kill command; the server's command-line protocol has, on a socket of its own
        // for as long as it takes.
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("longform-pulse-cli-\(UUID().uuidString.prefix(8))").path
        let module = try ExternalTool.check("pactl", ["--server", server, "load-module", "module-cli-protocol-unix", "socket=\(socket)"])
            .output.trimmingCharacters(in: .whitespacesAndNewlines)
        defer { _ = try? ExternalTool.run("pactl", ["--server", server, "unload-module", module]) }
        let commands = streams.map { "kill-sink-input \($0)\n" }.joined()
        // The protocol answers only a failure (and closes once its input ends).
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode()); s.shutdown(socket.SHUT_WR)
            sys.stdout.write(b"".join(iter(lambda: s.recv(65536), b"")).decode())
            """
        let answer = try ExternalTool.check("python3", ["-c", script, socket, commands]).output
        guard answer.isEmpty else { throw ExternalTool.Failure(description: "the server refused \(commands): \(answer)") }
        return streams.count
    }
}
