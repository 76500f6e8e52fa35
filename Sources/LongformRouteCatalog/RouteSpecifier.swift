import LongformAirPlayDiscovery
import LongformAirPlaySender
import LongformLocalRouteCatalog
import LongformRendering
import LongformRoutes
import LongformSpeakerSender

/// A route as the user names it on the command line: a local one (`null`, `wav:PATH`,
/// `pulse[:SINK]`, `alsa[:DEVICE]`), `speaker:HOST:PORT[,HOST:PORT…][?codec=flac|pcm|float]` or
/// `airplay:NAME|HOST[:PORT][,…][?password=TEXT]` (a name as the receiver announces it over mDNS),
/// or both in one group: `speaker:HOST:PORT,…,airplay:NAME,…` (docs/route-groups.md).
public indirect enum RouteSpecifier: Sendable, Equatable, CustomStringConvertible {
    /// A route on this machine.
    case local(LocalRouteSpecifier)
    /// Network speakers (`longform speaker`), one or a group playing in step, and how the audio goes to them.
    case speaker(endpoints: [SpeakerEndpoint], codec: SpeakerCodec)
    /// AirPlay receivers, one or a group playing in step, and the password for those that ask for one.
    case airPlay(endpoints: [AirPlayEndpoint], password: String?)
    /// Speakers and AirPlay receivers playing one timeline: one `.speaker` and one `.airPlay`.
    case group([RouteSpecifier])

    /// The route families a group may join, by the prefix that starts each.
    private static let groupFamilies = ["speaker:", "airplay:"]

    /// Parses a specifier; the error names what was wrong.
    public init(parsing text: String) throws(RouteError) {
        if let local = try LocalRouteSpecifier(parsingKnown: text) {
            self = .local(local)
            return
        }
        let parts = Self.familyParts(of: text)
        if parts.count > 1 {
            self = try Self.group(parsing: parts, route: text)
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

    /// `text` cut before each comma that starts a family (`,speaker:`, `,airplay:`): one part a family.
    private static func familyParts(of text: String) -> [String] {
        var parts: [String] = []
        for piece in text.split(separator: ",", omittingEmptySubsequences: false) {
            if parts.isEmpty || groupFamilies.contains(where: { piece.lowercased().hasPrefix($0) }) {
                parts.append(String(piece))
            } else {
                parts[parts.count - 1] += "," + piece
            }
        }
        return parts
    }

    /// A group of `parts`, each a family's list: the speakers' joined into one, the receivers' into
    /// one (their options must agree); the error names the part that is wrong.
    private static func group(parsing parts: [String], route: String) throws(RouteError) -> RouteSpecifier {
        var speakers: (endpoints: [SpeakerEndpoint], codec: SpeakerCodec)?
        var receivers: (endpoints: [AirPlayEndpoint], password: String?)?
        for part in parts {
            switch try RouteSpecifier(parsing: part) {
            case .speaker(let endpoints, let codec):
                if let earlier = speakers, earlier.codec != codec {
                    throw RouteError(route: route, reason: "'\(part)' asks for ?codec=\(codec.rawValue), an earlier part for \(earlier.codec.rawValue); a group's speakers share one codec")
                }
                speakers = ((speakers?.endpoints ?? []) + endpoints, codec)
            case .airPlay(let endpoints, let password):
                if let earlier = receivers, earlier.password != password {
                    throw RouteError(route: route, reason: "'\(part)' gives another password than an earlier part; a group's receivers share one")
                }
                receivers = ((receivers?.endpoints ?? []) + endpoints, password)
            case .local, .group:
                throw RouteError(route: route, reason: "'\(part)' cannot join a group; a group holds speaker: and airplay: routes")
            }
        }
        var members: [RouteSpecifier] = []
        if let speakers { members.append(.speaker(endpoints: speakers.endpoints, codec: speakers.codec)) }
        if let receivers { members.append(.airPlay(endpoints: receivers.endpoints, password: receivers.password)) }
        return members.count == 1 ? members[0] : .group(members)
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
        case .group(let members): members.map(\.description).joined(separator: ",")
        }
    }

    /// The names of the route's network receivers (`HOST:PORT`, as `GroupVolumeRoute.memberNames`
    /// gives them), or nil for a local route.
    public var memberNames: [String]? {
        switch self {
        case .local: nil
        case .speaker(let endpoints, _): endpoints.map(\.description)
        case .airPlay(let endpoints, _): endpoints.map(\.description)
        case .group(let members): members.flatMap { $0.memberNames ?? [] }
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
        case .group(let members):
            // In AirPlay 1's format (44.1 kHz stereo), which every member then plays.
            Self.makeGroup(members.map { $0.makeRoute(sampleRate: AirPlayRoute.sampleRate, channelCount: 2, lookAhead: lookAhead) })
        }
    }

    /// The members as one `RouteGroup`; they are made in one format, so that it cannot fail.
    private static func makeGroup(_ routes: [any AudioRoute]) -> any AudioRoute {
        let members = routes.compactMap { $0 as? any HostClockedRoute }
        do { return try RouteGroup(members: members) } catch { preconditionFailure("\(error)") }
    }
}
