import LongformAirPlayDiscovery
import LongformAirPlaySender
import LongformLocalRouteCatalog
import LongformRendering
import LongformSpeakerSender

/// A route as the user names it on the command line: a local one (`null`, `wav:PATH`,
/// `pulse[:SINK]`, `alsa[:DEVICE]`), `speaker:HOST:PORT[,HOST:PORT…][?codec=flac|pcm|float]` or
/// `airplay:NAME|HOST[:PORT][,…][?password=TEXT]` (a name as the receiver announces it over mDNS).
public enum RouteSpecifier: Sendable, Equatable, CustomStringConvertible {
    /// A route on this machine.
    case local(LocalRouteSpecifier)
    /// Network speakers (`longform speaker`), one or a group playing in step, and how the audio goes to them.
    case speaker(endpoints: [SpeakerEndpoint], codec: SpeakerCodec)
    /// AirPlay receivers, one or a group playing in step, and the password for those that ask for one.
    case airPlay(endpoints: [AirPlayEndpoint], password: String?)

    /// Parses a specifier; the error names what was wrong.
    public init(parsing text: String) throws(RouteError) {
        if let local = try LocalRouteSpecifier(parsingKnown: text) {
            self = .local(local)
            return
        }
        if text.lowercased().hasPrefix("airplay:") {
            self = try Self.airPlay(parsing: text)
            return
        }
        guard text.lowercased().hasPrefix("speaker:") || text.lowercased() == "speaker" else {
            throw RouteError(route: text, reason: "unknown route; use \(LocalRouteSpecifier.usage), speaker:HOST:PORT[,HOST:PORT...] or airplay:HOST[:PORT][,HOST[:PORT]...]")
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

    /// `airplay:HOST[:PORT][,…][?password=TEXT]`; the error names the part that is wrong.
    private static func airPlay(parsing text: String) throws(RouteError) -> RouteSpecifier {
        var argument = Substring(text.dropFirst("airplay:".count))
        var password: String?
        if let question = argument.lastIndex(of: "?") {
            let query = argument[argument.index(after: question)...]
            guard query.hasPrefix("password=") else {
                throw RouteError(route: text, reason: "'?\(query)' is not an option; use ?password=TEXT")
            }
            password = String(query.dropFirst("password=".count))
            argument = argument[..<question]
        }
        var endpoints: [AirPlayEndpoint] = []
        for part in argument.split(separator: ",", omittingEmptySubsequences: false) {
            guard let endpoint = AirPlayEndpoint(parsing: part) else {
                throw RouteError(route: text, reason: "'\(part)' is not HOST or HOST:PORT; use airplay:HOST[:PORT][,HOST[:PORT]...]")
            }
            endpoints.append(endpoint)
        }
        return .airPlay(endpoints: endpoints, password: password)
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

    /// A receiver named `name` as Avahi finds it within 3 s: its first address and RAOP port.
    @Sendable static func resolveByMulticastDNS(_ name: String) -> Result<AirPlayEndpoint, AirPlayError> {
        let receiver = "airplay:\(name)"
        do {
            guard let found = try AirPlayBrowser().find(name: name, timeout: 3) else {
                return .failure(AirPlayError(receiver: receiver, reason: "no receiver of that name answered over mDNS within 3 s"))
            }
            guard let address = found.preferredAddress, let port = found.raopPort else {
                return .failure(AirPlayError(receiver: receiver, reason: "found over mDNS, but without an address and an AirPlay 1 (RAOP) port"))
            }
            if found.requiresFairPlay { return .failure(AirPlayError(receiver: receiver, reason: "it requires Apple's FairPlay authentication, which Longform does not do")) }
            return .success(AirPlayEndpoint(host: address, port: port))
        } catch {
            return .failure(AirPlayError(receiver: receiver, reason: "not looked up over mDNS (\(error))"))
        }
    }

    /// The specifier as text.
    public var description: String {
        switch self {
        case .local(let local): local.description
        case .speaker(let endpoints, let codec): SpeakerRoute.name(endpoints: endpoints, codec: codec)
        // Without the password: the name is logged and shown.
        case .airPlay(let endpoints, _): AirPlayRoute.name(endpoints: endpoints)
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
        // 44.1 kHz stereo whatever is asked: what every RAOP receiver takes.
        case .airPlay(let endpoints, let password):
            AirPlayRoute(endpoints: endpoints, password: password, resolver: Self.resolveByMulticastDNS)
        }
    }
}
