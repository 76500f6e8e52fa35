import Foundation
import Logging
import LongformCore
import LongformRendering
import LongformRoutes
import LongformSpeakerProtocol
import NIOPosix

/// Network speakers (`longform speaker`) as one route: `speaker:HOST:PORT[,HOST:PORT…][?codec=NAME]`. The
/// renderer and synchronizer drive it exactly as they drive a local device; what it does with that
/// is the Longform speaker protocol (docs/speaker-protocol.md):
///
/// - Route frame `f` is media frame `f` on the wire, and the route's clock is the network clock:
///   frame 0 is heard at the host time the route starts at, and every frame after it at the
///   nominal rate. The speakers play each frame at that time (each corrects its own latency and
///   drift), so the route needs no device feedback.
/// - Audio is rendered and sent as far ahead as the look-ahead (3 minutes) and the smallest
///   speaker buffer allow, as fast as TCP takes it.
/// - The timeline's rate reaches the speakers as anchors "rate R, frame F at network time N": a
///   pause is `rate 0` at its frame, and the paused span is not rendered; playing again is `rate 1`
///   at the frame it starts.
/// - A rewind (a seek, an edit, a pause that takes back audio already sent) is a flush from that
///   frame to every speaker. A speaker that may have played part of it refuses, and cuts at the
///   first frame it accepts, which it names; the route then resumes at the latest frame named for
///   all of them (each is sent again the old audio from where it cut) and tells the renderer
///   (`routeDidResume`). Its rewind margin, the lead, grows to what the speakers need, so that
///   refusals stay rare.
/// - Each speaker has its own connection that reconnects by itself; one that was away is sent
///   what it is missing from where its buffer ends. The route answers the speakers' clock requests
///   on a UDP port, a free one or `LONGFORM_SPEAKER_TIMING_PORT`'s (for a firewall), served by
///   the process from the first start of a route on it to the process's end, and shared by every
///   route that asks for the same port.
public final class SpeakerRoute: HostClockedRoute, @unchecked Sendable {
    public let name: String
    public let format: AudioFormat
    public let pacing = RoutePacing.realTime
    public let preferredLookAhead: Double
    public let clock: RouteClock
    /// The speakers.
    public let endpoints: [SpeakerEndpoint]
    /// The name the speakers are told.
    public let senderName: String
    /// How the audio goes on the wire.
    public let codec: SpeakerCodec

    /// The least time ahead at which a change reaches the speakers (seconds).
    public static let minimumLead = 0.1
    /// How long a start waits for the speakers to connect and synchronise their clocks (seconds).
    public static let startTimeout = 3.0
    /// A speaker that joins a playing group (or ran dry) starts this much past the lead (seconds):
    /// its audio is sent from its first frame on, and on a busy host the first seconds of it took
    /// longer than the lead to arrive, so that it started, ran dry and jumped.
    public static let joinMargin = 0.5

    private let thread = RestartableRouteThread()
    private let rewinds = RewindSignal()
    private let running = LockedValue<Running?>(nil)
    /// Volumes and what plays, kept across starts: a new start's speakers are told them too.
    private let settings = LockedValue<Settings>(Settings())
    private let logger = Logger(label: LogLabel.speakerRoute)

    private struct Settings: Sendable {
        var speakerVolumes: [Int: Float] = [:]
        var groupVolume: Float = 1
        var nowPlaying: NowPlayingInfo?
    }

    private struct Running: Sendable {
        var feed: SpeakerFeed
        var links: [SpeakerLink]
    }

    /// The secret for speakers that require pairing, or why the one given cannot be used (told when the route starts).
    private let pairingSecret: Result<PairingSecret?, PairingSecret.Refusal>
    /// The UDP port to answer the clock on (0: a free one), or why the one given cannot be used.
    private let timingPort: Result<Int, RouteError>

    /// The environment variable that fixes the port a sender answers the clock on.
    public static let timingPortVariable = "LONGFORM_SPEAKER_TIMING_PORT"

    /// A route to `endpoints` at `sampleRate` with `channelCount` channels, its audio sent in `codec`.
    /// The pairing secret, for speakers that require one, is `LONGFORM_SPEAKER_SECRET`'s; the
    /// clock's port is `timingPort`, or when nil `LONGFORM_SPEAKER_TIMING_PORT`'s (0 or unset: a free one).
    public init(endpoints: [SpeakerEndpoint], codec: SpeakerCodec = .default, sampleRate: Int = 44_100, channelCount: Int = 2, lookAhead: Double = 180,
                senderName: String = ProcessInfo.processInfo.hostName, timingPort: Int? = nil) {
        pairingSecret = Result { () throws(PairingSecret.Refusal) in try PairingSecret.fromEnvironment() }
        self.endpoints = endpoints
        self.senderName = senderName
        self.codec = codec
        let name = Self.name(endpoints: endpoints, codec: codec)
        self.name = name
        self.timingPort = Result { () throws(RouteError) in
            if let timingPort { return timingPort }
            guard let text = ProcessInfo.processInfo.environment[Self.timingPortVariable] else { return 0 }
            guard let port = Int(text), (1...65_535).contains(port) else {
                throw RouteError(route: name, reason: "\(Self.timingPortVariable) is '\(text)', not a port from 1 to 65535")
            }
            return port
        }
        format = AudioFormat(sampleRate: sampleRate, channelCount: channelCount)
        preferredLookAhead = lookAhead
        clock = RouteClock(sampleRate: sampleRate, rewindMarginFrames: Int64(Self.minimumLead * Double(sampleRate)))
    }

    /// The route's name: `speaker:HOST:PORT,…`, and `?codec=NAME` unless the codec is the default.
    public static func name(endpoints: [SpeakerEndpoint], codec: SpeakerCodec) -> String {
        "speaker:" + endpoints.map(\.description).joined(separator: ",") + (codec == .default ? "" : "?codec=\(codec.rawValue)")
    }

    public func start(pullingFrom source: any RouteRenderSource) throws(RouteError) {
        try start(pullingFrom: source, meetingAt: nil)
    }

    /// Starts sending; frame 0 is heard the lead after the speakers are ready, or at the time `gate` agrees.
    public func start(pullingFrom source: any RouteRenderSource, meetingAt gate: RouteStartGate?) throws(RouteError) {
        let secret: PairingSecret?
        do { secret = try pairingSecret.get() } catch { throw RouteError(route: name, reason: "\(PairingSecret.environmentVariable): \(error)") }
        // The last run ends first, and the clock starts over before any link reads it.
        thread.stop(waiting: true)
        stopConnections(running.withLock { running in defer { running = nil }; return running })
        clock.reset()
        let clockPort = try startedClockServer(secret: secret).port
        let feed: SpeakerFeed
        do {
            feed = try SpeakerFeed(speakerCount: endpoints.count,
                                   format: AudioStreamFormat(sampleRate: UInt32(format.sampleRate), channelCount: UInt8(format.channelCount), encoding: codec.encoding))
        } catch {
            throw RouteError(route: name, reason: "\(codec.rawValue): \(error)")
        }
        // A new session each start: the speakers empty what an earlier one left.
        let hello = SpeakerMessage.hello(sessionID: (0..<16).map { _ in UInt8.random(in: 0...255) }, senderName: senderName, timingPort: UInt16(clockPort))
        let clock = clock, joinFrames = Int64(Self.joinMargin * Double(format.sampleRate))
        // One event loop carries every speaker's connection.
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let links = endpoints.enumerated().map { index, endpoint in
            // A speaker that holds nothing starts at the first frame, or, once the route plays, past
            // the frame heard by the lead and `joinMargin`.
            SpeakerLink(endpoint: endpoint, index: index, feed: feed, hello: hello, pairingSecret: secret, eventLoop: eventLoop) {
                clock.isRunning ? clock.currentFrame() + (clock.rewindMarginFrames ?? 0) + joinFrames : 0
            }
        }
        // Under the settings' lock, which a change of volume or of what plays also takes: none
        // falls between reading them and the feed being there to take the next.
        settings.withLock { settings in
            for (index, volume) in settings.speakerVolumes { feed.setVolume(volume, ofSpeaker: index) }
            feed.setVolume(settings.groupVolume, ofSpeaker: nil)
            if let playing = settings.nowPlaying { feed.setNowPlaying(playing) }
            running.value = Running(feed: feed, links: links)
        }
        for link in links { link.start() }
        thread.start(name: "longform.route.speaker", clock: clock) { [self] thread in
            pump(thread: thread, source: source, feed: feed, gate: gate)
        }
    }

    /// Renders again from `frame`; see `RewindableRoute`.
    public func rewind(toFrame frame: Int64) { rewinds.post(frame: frame) }

    /// Stops sending and closes the connections; the speakers play on what they hold until their
    /// sender is gone for good (see the protocol).
    public func stop(waiting: Bool = true) {
        thread.stop(waiting: false)
        rewinds.interrupt()
        // This run's connections, taken now: a start that comes before they are closed has its own.
        let run = running.withLock { running in defer { running = nil }; return running }
        guard waiting else {
            DispatchQueue.global().async { [self] in stopConnections(run) }
            return
        }
        thread.stop(waiting: true)
        stopConnections(run)
    }

    /// The look-ahead: the speakers are sent audio that far ahead, where their buffers take it.
    public var rendersAhead: Double { preferredLookAhead }

    /// The speakers' addresses (`HOST:PORT`), in the order of `endpoints`.
    public var memberNames: [String] { endpoints.map(\.description) }

    /// Sets one speaker's volume (`index` in `endpoints`), or the group's when `index` is nil; 0 to 1.
    public func setVolume(_ volume: Float, ofMember index: Int?) {
        let volume = min(max(volume, 0), 1)
        settings.withLock { settings in
            if let index { settings.speakerVolumes[index] = volume } else { settings.groupVolume = volume }
            running.value?.feed.setVolume(volume, ofSpeaker: index)
        }
    }

    /// The volume of speaker `index` (in `endpoints`), or the group's when `index` is nil; 0 to 1.
    public func volume(ofMember index: Int?) -> Float {
        settings.withLock { settings in index.map { settings.speakerVolumes[$0] ?? 1 } ?? settings.groupVolume }
    }

    /// Sends the title, artist, album and artwork to every speaker, and to those that connect later.
    public func nowPlayingDidChange(_ info: NowPlayingInfo) {
        var info = info
        if let artwork = info.artwork, !SpeakerFeed.fitsInOneMessage(artwork) {
            logger.warning("\(name): the artwork of \(info.title) (\(artwork.data.count) bytes) is larger than a message may be; not sent")
            info.artwork = nil
        }
        settings.withLock { settings in
            settings.nowPlaying = info
            running.value?.feed.setNowPlaying(info)
        }
    }

    private func stopConnections(_ run: Running?) {
        guard let run else { return }
        for link in run.links { link.stop() }
    }

    /// The process's clock server on the port asked for, answering the speakers paired with `secret`
    /// (see `ClockServer.shared(onPort:key:)`).
    private func startedClockServer(secret: PairingSecret?) throws(RouteError) -> ClockServer {
        let port = try timingPort.get()
        do { return try ClockServer.shared(onPort: port, key: secret.map(ClockKey.init)) } catch { throw RouteError(route: name, reason: "no port for the clock: \(error)") }
    }

    // MARK: - The route's thread

    private func pump(thread: RouteThread, source: any RouteRenderSource, feed: SpeakerFeed, gate: RouteStartGate?) {
        let channels = format.channelCount
        let sampleRate = Int64(format.sampleRate)
        var buffer = [Float](repeating: 0, count: SpeakerFeed.framesPerMessage * channels)
        var position: Int64 = 0 // the next frame to render
        var announcedRate: Double?
        rewinds.reset()
        waitForSpeakers(thread: thread, feed: feed)
        let startLead = Double(leadFrames(feed)) / Double(sampleRate)
        clock.update(frame: 0, heardAtHostTime: gate?.startTime(lead: startLead) { thread.shouldStop } ?? HostClock.now() + UInt64(startLead * 1e9))

        // The fill: from the start until every speaker has been sent as far ahead as the route goes.
        let fillStart = HostClock.now()
        var isFillReported = false
        func reportFill(aheadOf heard: Int64) {
            isFillReported = true
            let seconds = Double(position) / Double(sampleRate), elapsed = Double(HostClock.now() - fillStart) / 1e9
            logger.info("\(name): filled \(String(format: "%.1f", Double(position - heard) / Double(sampleRate))) s ahead; \(String(format: "%.1f", seconds)) s of audio sent in \(String(format: "%.2f", elapsed)) s (\(Int(seconds / elapsed))× real time)")
        }

        /// Whether the route reached its limit ahead and waits for `refillFrames` of room.
        var isTopped = false
        /// Frames appended far ahead that the links have not been told of yet (see `gathersFrames`).
        var gatheredFrames: Int64 = 0
        func tellLinks() {
            if gatheredFrames > 0 { feed.wakeLinks() }
            gatheredFrames = 0
        }
        func idle() {
            tellLinks()
            // A rewind that wakes the wait is kept for the top of the loop (the signal keeps the earliest).
            if let target = rewinds.wait(untilNanoseconds: HostClock.now() + 10_000_000) { rewinds.post(frame: target) }
        }

        while !thread.shouldStop {
            let lead = leadFrames(feed)
            clock.setRewindMarginFrames(lead)
            if let target = rewinds.take() {
                if target < position {
                    position = flush(from: target, renderedUpTo: position, source: source, feed: feed, thread: thread)
                    announcedRate = nil // the anchor goes again, from the new frame
                }
            }
            let (timelineRate, nextChange) = source.timelineRate(atRouteFrame: position)
            let rate: Double = timelineRate == 0 ? 0 : 1 // the renderer plays other rates at 1
            if rate != announcedRate {
                feed.announce(RateAnchor(rate: rate, mediaFrame: position, networkTime: clock.hostTime(ofFrame: position)))
                announcedRate = rate
            }
            if rate == 0 {
                // Paused: nothing is rendered; the speakers hold the anchor's frame until the rate changes.
                if let nextChange, nextChange > position {
                    position = nextChange
                    clock.noteFramesRendered(position)
                } else {
                    idle()
                }
                continue
            }
            let heard = clock.currentFrame()
            feed.discardHeard(before: heard - sampleRate)
            let aheadLimit = aheadLimitFrames(feed)
            if isTopped && position < heard + aheadLimit - Self.refillFrames(aheadLimit: aheadLimit, sampleRate: sampleRate) { isTopped = false }
            guard !isTopped && position < heard + aheadLimit else {
                isTopped = true
                tellLinks()
                if !isFillReported && feed.isEveryConnectedSpeakerSent(upTo: position) { reportFill(aheadOf: heard) }
                idle()
                continue
            }
            var count = SpeakerFeed.framesPerMessage
            if let nextChange, nextChange > position { count = min(count, Int(nextChange - position)) }
            // Nil: no more audio is coming, and what the renderer holds renders as it is.
            let queued = source.queuedFrameCount(fromRouteFrame: position) ?? Int64(count)
            if queued > 0 {
                count = min(count, Int(queued))
            } else if position > heard + lead {
                // Nothing queued (yet: a seek's audio comes a few milliseconds after its flush):
                // wait, while a change can still reach the speakers in time. The renderer's
                // look-ahead is the route's, but it comes in blocks of a second or so and can end
                // just short of the route's limit: within 2 s of it (half of it, for a short one),
                // and all sent, the fill is done.
                let limit = aheadLimitFrames(feed)
                tellLinks()
                if !isFillReported && position + min(2 * Int64(sampleRate), limit / 2) >= heard + limit
                    && feed.isEveryConnectedSpeakerSent(upTo: position) { reportFill(aheadOf: heard) }
                idle()
                continue
            } else {
                // Too late to wait: the frames go as silence (an underrun), so that the speakers stay in step.
                count = min(count, Int(heard + lead + Int64(SpeakerFeed.framesPerMessage) - position))
                logger.debug("\(name): nothing to send at frame \(position) (heard \(heard), lead \(lead)); \(count) frames of silence")
            }
            buffer.withUnsafeMutableBufferPointer { pointer in
                let slice = UnsafeMutableBufferPointer(rebasing: pointer[0..<(count * channels)])
                _ = source.render(into: slice, frameCount: count, atRouteFrame: position)
                let gathers = Self.gathersFrames(at: position, heard: heard, aheadLimit: aheadLimit, sampleRate: sampleRate)
                feed.append(UnsafeBufferPointer(slice), at: position, wakingLinks: !gathers)
                if gathers { gatheredFrames += Int64(count) }
            }
            if gatheredFrames >= sampleRate { tellLinks() }
            position += Int64(count)
            clock.noteFramesRendered(position)
        }
    }

    /// Waits until every speaker is connected with a good clock, or `startTimeout` passes, so that
    /// a start is heard from its first frame everywhere.
    private func waitForSpeakers(thread: RouteThread, feed: SpeakerFeed) {
        let deadline = HostClock.now() + UInt64(Self.startTimeout * 1e9)
        while !thread.shouldStop && feed.synchronizedSpeakerCount < endpoints.count && HostClock.now() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        let ready = feed.synchronizedSpeakerCount
        if ready < endpoints.count { logger.warning("\(name): starting with \(ready) of \(endpoints.count) speakers ready; the others join when they are") }
    }

    /// Flushes the speakers from `target` (or the frame heard now, if later); returns the frame
    /// the route renders again from: `target`, or a later one some speaker insisted on.
    private func flush(from target: Int64, renderedUpTo position: Int64, source: any RouteRenderSource, feed: SpeakerFeed, thread: RouteThread) -> Int64 {
        let from = max(target, clock.currentFrame())
        let (requestID, asked) = feed.beginFlush(from: from)
        // The answers are awaited while the speakers still have audio before `from`, and half a
        // second at most (a speaker that does not answer is not waited for at length).
        let secondsLeft = Double(Int64(bitPattern: clock.hostTime(ofFrame: from) &- HostClock.now())) / 1e9
        let refusals = feed.refusals(of: requestID, asked: asked, timeout: min(max(0.02, secondsLeft - 0.03), 0.5)) { thread.shouldStop }
        let resumed = min(max(from, refusals.values.max() ?? from), position)
        feed.endFlush(from: from, resumingAt: resumed, refusing: refusals)
        if resumed > from { logger.info("\(name): a speaker refused a flush from frame \(from); resuming at \(resumed)") }
        if resumed > target { source.routeDidResume(atFrame: resumed, afterRewindTo: target) }
        return resumed
    }

    /// The lead: how far ahead of the frame heard a change can still reach every speaker. At least
    /// `minimumLead`; more when a speaker's first changeable frame (its status) is further ahead
    /// (its flush margin of 50 ms and 30 ms for the answer on top), at most 2 s.
    private func leadFrames(_ feed: SpeakerFeed) -> Int64 {
        let sampleRate = Int64(format.sampleRate)
        var ahead: Int64 = 0
        for status in feed.playingStatuses where status.report.nextFrame >= 0 {
            ahead = max(ahead, status.report.nextFrame - clock.frame(atHostTime: status.receivedAt))
        }
        let needed = ahead + sampleRate * 80 / 1000
        return min(max(Int64(Self.minimumLead * Double(sampleRate)), needed), 2 * sampleRate)
    }

    /// Once the route is as far ahead as it goes, it renders again only when this much room has
    /// opened (frames): a second, for a look-ahead of 10 s or more, so that a speaker far ahead
    /// is sent a second of audio at a time (told to the links at once: `gathersFrames`) and wakes
    /// a few times a second for it, not for every block; none for a shorter one, whose speakers
    /// hold little to spare.
    static func refillFrames(aheadLimit: Int64, sampleRate: Int64) -> Int64 {
        aheadLimit >= 10 * sampleRate ? sampleRate : 0
    }

    /// Whether audio rendered at `position` is far enough ahead of the frame heard that the links
    /// are told of it a second at a time (or when the route idles) rather than a block at a
    /// time: more than half the limit ahead, on a route that refills a second at a time. Each
    /// block told alone went out alone, and a speaker far ahead woke for each (eleven a second).
    static func gathersFrames(at position: Int64, heard: Int64, aheadLimit: Int64, sampleRate: Int64) -> Bool {
        refillFrames(aheadLimit: aheadLimit, sampleRate: sampleRate) > 0 && position - heard > aheadLimit / 2
    }

    /// How far ahead of the frame heard audio is sent: the look-ahead, within what the smallest
    /// speaker buffer takes while it still reads. A speaker stops reading under
    /// `SpeakerFrame.readingRoomFrames` of room (about 12 s, or half its buffer), and a flush or
    /// an anchor sent then waits behind the audio in flight until the speaker has played that
    /// much (up to a second late). Besides what is sent ahead, the speaker keeps what its output
    /// may still render again, up to one write (a second) behind the frame heard: two seconds
    /// stay free.
    private func aheadLimitFrames(_ feed: SpeakerFeed) -> Int64 {
        let sampleRate = Int64(format.sampleRate)
        let lookAhead = Int64(preferredLookAhead * Double(sampleRate))
        guard let capacity = feed.smallestCapacityFrames else { return lookAhead }
        let room = Int64(SpeakerFrame.readingRoomFrames(capacityFrames: Int(capacity), bytesPerFrame: feed.format.bytesPerFrame))
        return max(sampleRate, min(lookAhead, capacity - room - 2 * sampleRate))
    }
}
