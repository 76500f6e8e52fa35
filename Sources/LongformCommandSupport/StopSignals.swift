import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Stop signals (SIGINT and SIGTERM by default) turned into a call, so that a command stops
/// cleanly (saving, closing its connections, restoring the terminal) instead of dying where it stands.
public final class StopSignals {
    private var sources: [any DispatchSourceSignal] = []

    /// Calls `handler` (on a global queue) at each of `signals` from now on.
    public init(_ signals: [Int32] = [SIGINT, SIGTERM], _ handler: @escaping @Sendable () -> Void) {
        for signalNumber in signals {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            sources.append(source)
        }
    }

    /// Stops listening (the signals stay ignored).
    public func cancel() {
        sources.forEach { $0.cancel() }
        sources.removeAll()
    }
}
