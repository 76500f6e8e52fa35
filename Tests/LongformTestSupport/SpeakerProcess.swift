import Foundation

/// A `longform speaker` process on a free loopback port writing what it plays to a WAV file (in
/// real time), for tests that play to it over the network.
public final class SpeakerProcess: @unchecked Sendable {
    /// The running command.
    public let running: LongformProcess
    /// The port it listens on.
    public let port: Int
    /// The WAV file it writes (unless it plays to another route).
    public let outputPath: String
    /// Its state directory (`--state`: its devices' rates), its own unless it was given one.
    public let stateDirectory: String

    /// Starts `longform speaker --listen HOST:PORT --route wav:… --name NAME --state DIR` plus
    /// `extraArguments` (port 0: a free one); with `route`, to that route instead of the WAV file;
    /// with `stateDirectory`, keeping its devices' rates there (a speaker started again), else in a
    /// directory of its own, so that no test's device rates reach another's.
    public init(name: String, host: String = "127.0.0.1", route: String? = nil, extraArguments: [String] = [], listenPort: Int = 0,
                stateDirectory: String? = nil, wrapper: [String] = []) throws {
        outputPath = TestAudio.path("speaker-\(name)-\(UUID().uuidString.prefix(8)).wav")
        self.stateDirectory = stateDirectory ?? TestAudio.path("speaker-state-\(name)-\(UUID().uuidString.prefix(8))")
        let process = try LongformProcess(["speaker", "--listen", "\(host):\(listenPort)", "--route", route ?? "wav:" + outputPath, "--name", name,
                                           "--state", self.stateDirectory] + extraArguments,
                                          readyPattern: #"listening on \S+:\d+"#, wrapper: wrapper)
        running = process
        let portText = process.readyLine.range(of: #":\d+,"#, options: .regularExpression).map { process.readyLine[$0].dropFirst().dropLast() }
        guard let port = portText.flatMap({ Int($0) }) else { throw ExternalTool.Failure(description: "no port in \(process.readyLine)") }
        self.port = port
    }

    /// `HOST:PORT` for a `speaker:` route.
    public func endpoint(host: String = "127.0.0.1") -> String { "\(host):\(port)" }

    /// Runs `longform play` of `path` to `speakers` as one group, with a state directory of its
    /// own and `arguments` (options of `play`), until it has played.
    public static func play(_ path: String, to speakers: [SpeakerProcess], codec: String? = nil, arguments: [String] = []) throws -> ExternalTool.Result {
        let state = TestAudio.path("route-state-\(UUID().uuidString.prefix(8))")
        let route = "speaker:" + speakers.map { $0.endpoint() }.joined(separator: ",") + (codec.map { "?codec=" + $0 } ?? "")
        return try ExternalTool.run(ExternalTool.longformExecutable, ["play", "--route", route, "--state", state] + arguments + [path])
    }

    /// What it printed so far.
    public var output: String { running.output }

    /// Stops it (SIGTERM), so that its WAV file is complete.
    public func stop() { running.kill() }
}
