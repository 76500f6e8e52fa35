import Logging
import LongformCore
import LongformRendering

/// Routes of different kinds as one route (`speaker:…,airplay:…`): network speakers and AirPlay
/// receivers playing one timeline, each frame at one host time (docs/route-groups.md).
///
/// - Every member is a `HostClockedRoute`: frame `f` is heard at `t0 + f / sampleRate`. The
///   members start at one `t0`, agreed through a `RouteStartGate` once each is ready, and then
///   need no feedback from each other.
/// - The member that sends furthest ahead (the speakers, minutes) leads: it pulls from the
///   renderer, and what it renders is kept (`RenderedAudio`) for the others, which play the very
///   same frames from it. So a member that sends little ahead (AirPlay 1, 0.4 s) plays what the
///   leader sent minutes ago, not what the renderer holds now.
/// - The group's rewind margin is its members' largest, so that a change reaches every member at
///   one frame; a rewind goes to each, and the leader's answer (it renders again, or resumes
///   later) is what the followers then read.
/// - Each member connects, reconnects and reports its receivers by itself: one lost leaves the
///   others playing.
public final class RouteGroup: HostClockedRoute, @unchecked Sendable {
    public let name: String
    public let format: AudioFormat
    public let pacing = RoutePacing.realTime
    public let preferredLookAhead: Double
    public let clock: RouteClock
    /// The leader's.
    public var rendersAhead: Double { members[leaderIndex].rendersAhead }
    /// The member routes, in the order of the route's name.
    public let members: [any HostClockedRoute]
    /// The member that pulls from the renderer: the one that sends furthest ahead.
    public let leaderIndex: Int

    /// The audio the leader rendered in the current run, which a rewind marks.
    private let recorded = LockedValue<LockedValue<RenderedAudio>?>(nil)
    private let logger = Logger(label: LogLabel.routeGroup)

    /// A group of `members`, all in one format; the error says which differs.
    public init(members: [any HostClockedRoute]) throws(RouteError) {
        let name = members.map(\.name).joined(separator: ",")
        guard let first = members.first else { throw RouteError(route: name, reason: "a group needs at least one member") }
        if let other = members.first(where: { $0.format != first.format }) {
            throw RouteError(route: name, reason: "\(other.name) plays \(other.format), \(first.name) plays \(first.format); a group plays one format")
        }
        self.name = name
        self.members = members
        format = first.format
        leaderIndex = members.indices.max { members[$0].rendersAhead < members[$1].rendersAhead }!
        preferredLookAhead = members.map(\.preferredLookAhead).max()!
        clock = RouteClock(sampleRate: first.format.sampleRate, followingMarginsOf: members.map(\.clock))
    }

    public func start(pullingFrom source: any RouteRenderSource) throws(RouteError) {
        try start(pullingFrom: source, meetingAt: nil)
    }

    /// Starts every member at one `t0`: `gate`'s, when the group is itself a member, else its own.
    public func start(pullingFrom source: any RouteRenderSource, meetingAt outerGate: RouteStartGate?) throws(RouteError) {
        stop(waiting: true)
        clock.reset()
        let audio = LockedValue(RenderedAudio(channelCount: format.channelCount))
        recorded.value = audio
        let gate = RouteStartGate(memberCount: members.count, clock: clock)
        if outerGate != nil { logger.warning("\(name): a group within a group starts on its own time") }
        var started: [any HostClockedRoute] = []
        do throws(RouteError) {
            for (index, member) in members.enumerated() {
                let memberSource: any RouteRenderSource = index == leaderIndex
                    ? LeaderSource(source: source, audio: audio, clock: clock)
                    : FollowerSource(source: source, audio: audio, memberName: member.name)
                try member.start(pullingFrom: memberSource, meetingAt: gate)
                started.append(member)
            }
        } catch {
            for member in started { member.stop(waiting: true) }
            throw error
        }
    }

    /// A change from `frame` on, sent to every member: the followers wait for the leader's audio from there.
    public func rewind(toFrame frame: Int64) {
        recorded.value?.withLock { $0.rewind(toFrame: frame) }
        for member in members { member.rewind(toFrame: frame) }
    }

    public func sourceDidQueueAudio() {
        for member in members { member.sourceDidQueueAudio() }
    }

    /// Stops every member at once.
    public func stop(waiting: Bool = true) {
        for member in members { member.stop(waiting: false) }
        if waiting { for member in members { member.stop(waiting: true) } }
    }

    /// Every member's receivers, in the members' order.
    public var memberNames: [String] { members.flatMap(\.memberNames) }

    /// Sets receiver `index`'s own volume (in `memberNames`), or every member's group volume when `index` is nil.
    public func setVolume(_ volume: Float, ofMember index: Int?) {
        guard let index else {
            for member in members { member.setVolume(volume, ofMember: nil) }
            return
        }
        if let (member, local) = locate(index) { member.setVolume(volume, ofMember: local) }
    }

    /// The volume of receiver `index`, or the group's when `index` is nil.
    public func volume(ofMember index: Int?) -> Float {
        guard let index else { return members[0].volume(ofMember: nil) }
        return locate(index).map { $0.member.volume(ofMember: $0.local) } ?? 1
    }

    /// Tells every member what plays.
    public func nowPlayingDidChange(_ info: NowPlayingInfo) {
        for member in members { member.nowPlayingDidChange(info) }
    }

    /// The member that holds receiver `index` of `memberNames`, and its index there.
    private func locate(_ index: Int) -> (member: any HostClockedRoute, local: Int)? {
        var rest = index
        for member in members {
            let count = member.memberNames.count
            if rest < count { return (member, rest) }
            rest -= count
        }
        return nil
    }
}
