import CPulse
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Asks a PulseAudio server for its sinks through libpulse's introspection API.
package enum PulseSinkList {
    /// A sink: its name (what `pulse:NAME` takes) and description.
    package struct Sink: Sendable {
        /// What `pulse:NAME` takes.
        package var name: String
        /// What the server shows a person.
        package var description: String
    }

    private final class Context {
        var sinks: [Sink] = []
        var isDone = false
        var failed = false
    }

    /// The server's sinks, or nil when no server answers within `timeoutSeconds`.
    package static func sinks(timeoutSeconds: Double = 2) -> [Sink]? {
        guard let mainloop = pa_mainloop_new() else { return nil }
        defer { pa_mainloop_free(mainloop) }
        guard let context = pa_context_new(pa_mainloop_get_api(mainloop), "longform-routes") else { return nil }
        defer { pa_context_unref(context) }
        guard pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else { return nil }
        defer { pa_context_disconnect(context) }
        let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
        // Wait for the connection.
        while true {
            let state = pa_context_get_state(context)
            if state == PA_CONTEXT_READY { break }
            if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED || Date() > deadline { return nil }
            pa_mainloop_iterate(mainloop, 0, nil)
            usleep(1000)
        }
        let box = Context()
        let unmanaged = Unmanaged.passRetained(box)
        defer { unmanaged.release() }
        let operation = pa_context_get_sink_info_list(context, { _, info, eol, userdata in
            let box = Unmanaged<Context>.fromOpaque(userdata!).takeUnretainedValue()
            if eol != 0 { box.isDone = true; return }
            guard let info else { return }
            box.sinks.append(Sink(name: String(cString: info.pointee.name), description: info.pointee.description.map { String(cString: $0) } ?? ""))
        }, unmanaged.toOpaque())
        defer { if let operation { pa_operation_unref(operation) } }
        while !box.isDone && Date() < deadline {
            pa_mainloop_iterate(mainloop, 0, nil)
            usleep(1000)
        }
        return box.isDone ? box.sinks : nil
    }
}
