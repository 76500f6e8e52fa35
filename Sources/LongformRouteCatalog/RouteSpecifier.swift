import LongformLocalRouteCatalog
import LongformRendering
import LongformSpeakerSender

/// A route as the user names it on the command line: a local one (`null`, `wav:PATH`,
/// `pulse[:SINK]`, `alsa[:DEVICE]`) or `speaker:HOST:PORT[,HOST:PORT…][?codec=flac|pcm|float]`.
public enum RouteSpecifier: Sendable, Equatable, CustomStringConvertible {
    /// A route on this machine.
    case local(LocalRouteSpecifier)
    /// Network speakers (`longform speaker`), one or a group playing in step, and how the audio goes to them.
    case speaker(endpoints: [SpeakerEndpoint], codec: SpeakerCodec)

    /// Parses a specifier; the error names what was wrong.
    public init(parsing text: String) throws(RouteError) {
        if let local = try LocalRouteSpecifier(parsingKnown: text) {
            self = .local(local)
            return
        }
        guard text.lowercased().hasPrefix("speaker:") || text.lowercased() == "speaker" else {
            throw RouteError(route: text, reason: "unknown route; use \(LocalRouteSpecifier.usage) or speaker:HOST:PORT[,HOST:PORT...]")
        }
        let argument = text.dropFirst("speaker".count).dropFirst()
        let (list, codec) = try Self.speakerCodec(in: String(argument), route: text)
        var endpoints: [SpeakerEndpoint] = []
        for part in list.split(separator: ",", omittingEmptySubsequences: false) {
            guard let endpoint = SpeakerEndpoint(parsing: part) else {
                throw RouteError(route: text, reason: "'\(part)' is not HOST:PORT; use speaker:HOST:PORT[,HOST:PORT...]")
            }
            endpoints.append(endpoint)
        }
        self = .speaker(endpoints: endpoints, codec: codec)
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
        case .local(let local): local.description
        case .speaker(let endpoints, let codec): SpeakerRoute.name(endpoints: endpoints, codec: codec)
        }
    }

    /// Creates the route, playing in real time at `sampleRate` with `channelCount` channels. A
    /// `lookAhead` (seconds) is how far ahead a speaker route sends audio (default: 3 minutes);
    /// local routes take theirs from the renderer.
    public func makeRoute(sampleRate: Int = 44_100, channelCount: Int = 2, lookAhead: Double? = nil) -> any AudioRoute {
        switch self {
        case .local(let local): local.makeRoute(sampleRate: sampleRate, channelCount: channelCount)
        case .speaker(let endpoints, let codec):
            SpeakerRoute(endpoints: endpoints, codec: codec, sampleRate: sampleRate, channelCount: channelCount, lookAhead: lookAhead ?? 180)
        }
    }
}
