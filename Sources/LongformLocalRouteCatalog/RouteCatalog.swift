import LongformALSA
import LongformPulseAudio

/// The routes this machine offers, and the one to play to when none is named.
public enum RouteCatalog {
    /// One available route.
    public struct Entry: Sendable {
        /// What `--route` takes.
        public var specifier: LocalRouteSpecifier
        /// A human description.
        public var description: String
    }

    /// The routes available now: the null route, every PulseAudio sink if a server answers,
    /// ALSA's default device if it opens, and WAV files.
    public static func availableRoutes() -> [Entry] {
        var entries: [Entry] = []
        if let sinks = PulseSinkList.sinks() {
            entries.append(Entry(specifier: .pulse(sink: nil), description: "PulseAudio: the server's default sink"))
            for sink in sinks { entries.append(Entry(specifier: .pulse(sink: sink.name), description: "PulseAudio: \(sink.description)")) }
        }
        if ALSARoute.canOpen(device: "default") {
            entries.append(Entry(specifier: .alsa(device: "default"), description: "ALSA: the default device"))
        }
        entries.append(Entry(specifier: .null, description: "Null: plays in real time and discards the audio"))
        entries.append(Entry(specifier: .wav(path: "PATH"), description: "WAV file: writes what would be heard, in real time"))
        return entries
    }

    /// PulseAudio if a server runs, else ALSA's default device if it opens, else `fallback` (a WAV
    /// file for a player someone listens to later; the null route for a daemon, which would write
    /// a file without end).
    public static func defaultRoute(fallback: LocalRouteSpecifier) -> LocalRouteSpecifier {
        if PulseSinkList.sinks(timeoutSeconds: 1) != nil { return .pulse(sink: nil) }
        if ALSARoute.canOpen(device: "default") { return .alsa(device: "default") }
        return fallback
    }
}
