import ArgumentParser
import Logging
import LongformCore

/// Logging switches every command takes.
public struct LoggingOptions: ParsableArguments {
    @Flag(name: .long, help: "Log the engine's actions in detail (debug level); given twice, also each timing report of an output and each status a speaker sends (trace level).")
    public var verbose: Int

    @Flag(name: .long, help: "Log every buffer enqueued into the renderer.")
    public var logEnqueuer = false

    /// The switches as given (none, until parsed).
    public init() {}

    /// Sends log lines to standard error: `defaultLevel` and above, debug with --verbose, trace with
    /// it twice, per-buffer lines with --log-enqueuer.
    public func bootstrap(defaultLevel: Logger.Level = .info) {
        let base: Logger.Level = verbose >= 2 ? .trace : verbose == 1 ? .debug : defaultLevel
        let enqueue: Logger.Level = logEnqueuer ? .trace : .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = label == LogLabel.enqueue ? enqueue : base
            return handler
        }
    }
}
