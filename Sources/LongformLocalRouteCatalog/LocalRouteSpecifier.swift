import LongformALSA
import LongformCore
import LongformPulseAudio
import LongformRendering
import LongformRoutes

/// A route on this machine as the user names it: `null`, `wav:PATH`, `pulse[:SINK]` or
/// `alsa[:DEVICE]`. What a network speaker may play to; `RouteSpecifier` adds the speaker route.
public enum LocalRouteSpecifier: Sendable, Equatable, CustomStringConvertible {
    /// Real-time, discarding.
    case null
    /// A WAV file, paced in real time.
    case wav(path: String)
    /// A PulseAudio sink (nil: the default).
    case pulse(sink: String?)
    /// An ALSA device.
    case alsa(device: String)

    /// What an unknown name is told to use instead.
    public static let usage = "null, wav:PATH, pulse[:SINK] or alsa[:DEVICE]"

    /// Parses a specifier; the error names what was wrong.
    public init(parsing text: String) throws(RouteError) {
        guard let specifier = try Self(parsingKnown: text) else {
            throw RouteError(route: text, reason: "unknown route; use \(Self.usage)")
        }
        self = specifier
    }

    /// Parses a specifier of a local kind; nil for another kind (so that a caller knowing more
    /// kinds can go on), an error for a local kind given wrongly.
    public init?(parsingKnown text: String) throws(RouteError) {
        let (kind, argument): (Substring, String?) = {
            guard let colon = text.firstIndex(of: ":") else { return (Substring(text), nil) }
            return (text[..<colon], String(text[text.index(after: colon)...]))
        }()
        switch kind.lowercased() {
        case "null" where argument == nil: self = .null
        case "null": throw RouteError(route: text, reason: "null takes nothing after it")
        case "wav":
            guard let argument, !argument.isEmpty else { throw RouteError(route: text, reason: "wav needs a path: wav:/path/to/out.wav") }
            self = .wav(path: argument)
        case "pulse": self = .pulse(sink: argument.flatMap { $0.isEmpty ? nil : $0 })
        case "alsa": self = .alsa(device: argument.flatMap { $0.isEmpty ? nil : $0 } ?? "default")
        default: return nil
        }
    }

    /// The specifier as text.
    public var description: String {
        switch self {
        case .null: "null"
        case .wav(let path): "wav:\(path)"
        case .pulse(let sink): sink.map { "pulse:\($0)" } ?? "pulse"
        case .alsa(let device): "alsa:\(device)"
        }
    }

    /// Creates the route, playing in real time at `sampleRate` with `channelCount` channels. A
    /// route that `keepsTime` plays each frame at the time its clock gives rather than every frame
    /// (a speaker's output in a group). A route to a device whose rate it measures (pulse) keeps
    /// that rate in `rateMemory` and starts from it next time.
    public func makeRoute(sampleRate: Int = 44_100, channelCount: Int = 2, keepsTime: Bool = false, rateMemory: DeviceRateMemory? = nil) -> any AudioRoute {
        switch self {
        case .null: NullRoute(sampleRate: sampleRate, channelCount: channelCount)
        case .wav(let path): WAVFileRoute(path: path, sampleRate: sampleRate, channelCount: channelCount, pacing: .realTime)
        case .pulse(let sink): PulseAudioRoute(sink: sink, sampleRate: sampleRate, channelCount: channelCount,
                                               flushBehavior: keepsTime ? .keepsTime : .keepsEveryFrame, rateMemory: rateMemory)
        case .alsa(let device): ALSARoute(device: device, sampleRate: sampleRate, channelCount: channelCount)
        }
    }
}
