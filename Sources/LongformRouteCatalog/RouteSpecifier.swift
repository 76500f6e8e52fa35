import Foundation
import LongformALSA
import LongformCore
import LongformPulseAudio
import LongformRendering
import LongformRoutes
import LongformSpeakerSender

/// A route as the user names it on the command line: `null`, `wav:PATH`, `pulse[:SINK]`,
/// `alsa[:DEVICE]`, `speaker:HOST:PORT[,HOST:PORT…][?codec=flac|pcm|float]`.
public enum RouteSpecifier: Sendable, Equatable, CustomStringConvertible {
    /// Real-time, discarding.
    case null
    /// A WAV file, paced in real time.
    case wav(path: String)
    /// A PulseAudio sink (nil: the default).
    case pulse(sink: String?)
    /// An ALSA device.
    case alsa(device: String)
    /// Network speakers (`longform speaker`), one or a group playing in step, and how the audio goes to them.
    case speaker(endpoints: [SpeakerEndpoint], codec: SpeakerCodec)

    /// Parses a specifier; the error names what was wrong.
    public init(parsing text: String) throws(RouteError) {
        let (kind, argument): (Substring, String?) = {
            guard let colon = text.firstIndex(of: ":") else { return (Substring(text), nil) }
            return (text[..<colon], String(text[text.index(after: colon)...]))
        }()
        switch kind.lowercased() {
        case "null" where argument == nil: self = .null
        case "wav":
            guard let argument, !argument.isEmpty else { throw RouteError(route: text, reason: "wav needs a path: wav:/path/to/out.wav") }
            self = .wav(path: argument)
        case "pulse": self = .pulse(sink: argument.flatMap { $0.isEmpty ? nil : $0 })
        case "alsa": self = .alsa(device: argument.flatMap { $0.isEmpty ? nil : $0 } ?? "default")
        case "speaker":
            let (list, codec) = try Self.speakerCodec(in: argument ?? "", route: text)
            let parts = list.split(separator: ",", omittingEmptySubsequences: false)
            var endpoints: [SpeakerEndpoint] = []
            for part in parts {
                guard let endpoint = SpeakerEndpoint(parsing: part) else {
                    throw RouteError(route: text, reason: "'\(part)' is not HOST:PORT; use speaker:HOST:PORT[,HOST:PORT...]")
                }
                endpoints.append(endpoint)
            }
            self = .speaker(endpoints: endpoints, codec: codec)
        default:
            throw RouteError(route: text, reason: "unknown route; use null, wav:PATH, pulse[:SINK], alsa[:DEVICE] or speaker:HOST:PORT[,HOST:PORT...]")
        }
    }

    /// A speaker list and its `?codec=NAME` (the default when absent); the error names a bad one.
    private static func speakerCodec(in argument: String, route: String) throws(RouteError) -> (list: Substring, codec: SpeakerCodec) {
        guard let question = argument.lastIndex(of: "?") else { return (argument[...], .default) }
        let query = argument[argument.index(after: question)...]
        let names = SpeakerCodec.allCases.map(\.rawValue).joined(separator: ", ")
        guard query.hasPrefix("codec="), let codec = SpeakerCodec(rawValue: String(query.dropFirst("codec=".count))) else {
            throw RouteError(route: route, reason: "'?\(query)' is not a codec; use ?codec= one of \(names)")
        }
        return (argument[..<question], codec)
    }

    /// The specifier as text.
    public var description: String {
        switch self {
        case .null: "null"
        case .wav(let path): "wav:\(path)"
        case .pulse(let sink): sink.map { "pulse:\($0)" } ?? "pulse"
        case .alsa(let device): "alsa:\(device)"
        case .speaker(let endpoints, let codec): SpeakerRoute.name(endpoints: endpoints, codec: codec)
        }
    }

    /// Creates the route, playing in real time at `sampleRate` with `channelCount` channels. A
    /// `lookAhead` (seconds) is how far ahead a speaker route sends audio (default: 3 minutes);
    /// local routes take theirs from the renderer. A route that `keepsTime` plays each frame at
    /// the time its clock gives rather than every frame (a speaker's output in a group).
    public func makeRoute(sampleRate: Int = 44_100, channelCount: Int = 2, lookAhead: Double? = nil, keepsTime: Bool = false) -> any AudioRoute {
        switch self {
        case .null: NullRoute(sampleRate: sampleRate, channelCount: channelCount)
        case .wav(let path): WAVFileRoute(path: path, sampleRate: sampleRate, channelCount: channelCount, pacing: .realTime)
        case .pulse(let sink): PulseAudioRoute(sink: sink, sampleRate: sampleRate, channelCount: channelCount,
                                               flushBehavior: keepsTime ? .keepsTime : .keepsEveryFrame)
        case .alsa(let device): ALSARoute(device: device, sampleRate: sampleRate, channelCount: channelCount)
        case .speaker(let endpoints, let codec):
            SpeakerRoute(endpoints: endpoints, codec: codec, sampleRate: sampleRate, channelCount: channelCount, lookAhead: lookAhead ?? 180)
        }
    }
}

/// The routes this machine offers, and the one to play to when none is named.
public enum RouteCatalog {
    /// One available route.
    public struct Entry: Sendable {
        /// What `--route` takes.
        public var specifier: RouteSpecifier
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
    public static func defaultRoute(fallback: RouteSpecifier) -> RouteSpecifier {
        if PulseSinkList.sinks(timeoutSeconds: 1) != nil { return .pulse(sink: nil) }
        if ALSARoute.canOpen(device: "default") { return .alsa(device: "default") }
        return fallback
    }
}
