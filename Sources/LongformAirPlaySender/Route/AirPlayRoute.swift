import Foundation
import Logging
import LongformAirPlayProtocol
import LongformCore
import LongformRendering
import LongformRoutes

/// How the route finds a receiver by the name it announces: its address and announced RTSP port, or why not.
public typealias AirPlayNameResolver = @Sendable (_ name: String) -> Result<AirPlayEndpoint, AirPlayError>

/// AirPlay receivers as one route: `airplay:NAME|HOST[:PORT][,…]`, AirPlay 1 (RAOP) to each
/// (docs/airplay.md). The renderer and synchronizer drive it as they drive a local device:
///
/// - Route frame `f` is RTP time `base + f`, and the route's clock is the host clock: frame 0 is
///   heard at the host time the route starts at, and every frame after it at the nominal rate.
///   Each receiver measures its offset to the host clock (the timing port answers it) and is told
///   by sync packets which RTP time is heard when, so the route needs no feedback from it.
/// - Audio goes as uncompressed ALAC, 352 frames a packet, `sendAhead` ahead of the frame heard,
///   the same packets to every receiver; the last 1,024 are kept for the receivers' resend requests.
/// - The packets are one unbroken stream of 352-frame packets, the timeline's stretches in each
///   and silence where it stands still. A change (a seek, an edit, a pause) reaches the audio
///   `sendAhead` ahead: the route's rewind margin. A RAOP receiver's FLUSH drops all it holds and
///   silences what follows for a while, so a change is never a FLUSH: one the renderer places
///   before the audio sent moves to its end (`routeDidResume`), and nothing heard is lost. A pause
///   of more than `pauseSilence` stops the stream; when the timeline plays again, a FLUSH and a
///   lead-in start the receivers at the new RTP time.
/// - Each receiver connects, and reconnects when lost, by itself; one that joins is sent a sync
///   packet and the audio from the next packet on.
public final class AirPlayRoute: HostClockedRoute, @unchecked Sendable {
    public let name: String
    public let format: AudioFormat
    public let pacing = RoutePacing.realTime
    public let preferredLookAhead: Double
    public let clock: RouteClock
    /// The receivers.
    public let endpoints: [AirPlayEndpoint]

    /// How far ahead of the frame heard audio is sent (seconds), and so how soon a change is
    /// heard. A receiver takes each packet out of its buffer its output's buffer length before it
    /// is due (0.15 s by default in shairport-sync's ALSA backend), so the rest is the network's:
    /// a packet lost is asked for again 0.1 s after a later one comes, and must come back in time.
    public static let sendAhead = 0.4
    /// The least time ahead a packet goes (seconds): audio not queued yet (a seek's comes a few
    /// milliseconds after it) is waited for until then, and after that sent as silence.
    static let minimumAhead = 0.2
    /// How long a pause keeps the stream going as silence (seconds): a pause shorter than this
    /// (a seek, an edit, a pause undone) plays on without a FLUSH, which would drop what the
    /// receivers hold and silence what follows; a longer one stops the stream.
    static let pauseSilence = 2.0
    /// The silent packets sent before the audio at a start and after a FLUSH: a receiver
    /// silences the first nine it gets, which are then these, not the audio's.
    static let leadInPackets = 9
    /// How long after a FLUSH's answer the lead-in goes (seconds): a receiver empties its buffer
    /// when its player next looks, not when it answers, and a lead-in that came before that went
    /// with the old audio (shairport-sync).
    static let flushSettling = 0.02
    /// How often each receiver is sent a sync packet (seconds): a receiver ignores those that come
    /// before its first clock answer, and schedules nothing before one it takes.
    static let syncInterval = 0.25
    /// How long a start waits for the receivers to connect (seconds).
    public static let startTimeout = 3.0
    /// How far past the start the first frame is heard (seconds). A receiver opens its output
    /// when it has the first packets and has it running by their time: shairport-sync's `pa`
    /// backend played the first frame 85 ms late after 0.43 s, and then flushed what it held.
    public static let startLead = 1.0
    /// The environment variable that holds the password for receivers that ask for one.
    public static let passwordVariable = "LONGFORM_AIRPLAY_PASSWORD"
    /// The rate every RAOP receiver takes (frames per second).
    public static let sampleRate = 44_100
    /// Frames per packet.
    static let framesPerPacket = RAOPSessionDescription.framesPerPacket

    private let thread = RestartableRouteThread()
    private let rewinds = RewindSignal()
    private let links = LockedValue<[AirPlayReceiverLink]>([])
    private let settings = LockedValue<Settings>(Settings())
    private let password: String?
    private let resolver: AirPlayNameResolver?
    private let clientID = UInt64.random(in: 1...UInt64.max)
    private let logger = Logger(label: LogLabel.airPlayRoute)

    private struct Settings: Sendable {
        var memberVolumes: [Int: Float] = [:]
        var groupVolume: Float = 1
        var nowPlaying: NowPlayingInfo?
        /// Bumped at each change of a volume, so that the route's thread sends the volumes once.
        var volumeGeneration = 0
        /// Bumped at each change of what plays (artwork is large: not sent again for a volume).
        var nowPlayingGeneration = 0
    }

    /// A route to `endpoints` at `sampleRate` (stereo: RAOP's ALAC is 2 channels); the password,
    /// for receivers that ask, is `password`'s or else `LONGFORM_AIRPLAY_PASSWORD`'s.
    public init(endpoints: [AirPlayEndpoint], sampleRate: Int = AirPlayRoute.sampleRate, lookAhead: Double = 10, password: String? = nil,
                resolver: AirPlayNameResolver? = nil) {
        self.endpoints = endpoints
        self.resolver = resolver
        name = Self.name(endpoints: endpoints)
        format = AudioFormat(sampleRate: sampleRate, channelCount: 2)
        preferredLookAhead = lookAhead
        self.password = password ?? ProcessInfo.processInfo.environment[Self.passwordVariable]
        // A change reaches past what was sent: the send-ahead and the packet being filled.
        clock = RouteClock(sampleRate: sampleRate, rewindMarginFrames: Int64(Self.sendAhead * Double(sampleRate)) + Int64(Self.framesPerPacket))
    }

    /// The route's name: `airplay:HOST:PORT,…`.
    public static func name(endpoints: [AirPlayEndpoint]) -> String {
        "airplay:" + endpoints.map(\.description).joined(separator: ",")
    }

    public func start(pullingFrom source: any RouteRenderSource) throws(RouteError) {
        try start(pullingFrom: source, meetingAt: nil)
    }

    /// Starts sending; frame 0 is heard `startLead` after the receivers are connected, or at the time `gate` agrees.
    public func start(pullingFrom source: any RouteRenderSource, meetingAt gate: RouteStartGate?) throws(RouteError) {
        thread.stop(waiting: true)
        stopLinks()
        clock.reset()
        let history = RAOPPacketHistory()
        let stream = StreamPosition(sequenceNumber: UInt16.random(in: 0...UInt16.max), rtpBase: UInt32.random(in: 0...UInt32.max))
        // A receiver drops the packets before its RECORD's RTP time: the first is the lead-in's.
        stream.setNext(sequenceNumber: stream.next.sequenceNumber, frame: -Int64(Self.leadInPackets * Self.framesPerPacket))
        let sampleRate = format.sampleRate
        let newLinks = endpoints.map { endpoint in
            let receiverName = "airplay:\(endpoint)"
            return AirPlayReceiverLink(receiverName: receiverName) { [password, clientID, resolver] opening throws(AirPlayError) -> RAOPSession in
                // A name is looked up at each attempt: a receiver that comes back may have another
                // address. One with a dot is a host name (`kitchen.local`), left to the system's resolver.
                var target = endpoint
                var lookupFailure: String?
                if !endpoint.isNumericAddress && !endpoint.host.contains("."), let resolver {
                    switch resolver(endpoint.host) {
                    case .success(let found): target = AirPlayEndpoint(host: found.host, port: endpoint.isPortGiven ? endpoint.port : found.port)
                    case .failure(let error): lookupFailure = error.reason
                    }
                }
                let next = stream.next
                do throws(AirPlayError) {
                    return try RAOPSession.open(host: target.host, port: target.port, receiverName: receiverName, password: password, clientID: clientID,
                                                sampleRate: sampleRate, firstSequenceNumber: next.sequenceNumber, firstRTPTime: next.rtpTime, history: history,
                                                opening: opening)
                } catch {
                    guard let lookupFailure else { throw error }
                    throw AirPlayError(receiver: receiverName, reason: "\(lookupFailure); as a host name, \(error.reason)")
                }
            }
        }
        links.value = newLinks
        for link in newLinks { link.start() }
        thread.start(name: "longform.route.airplay", clock: clock) { [self] thread in
            pump(thread: thread, source: source, links: newLinks, history: history, stream: stream, gate: gate)
        }
    }

    /// A change from `frame` on: it reaches the audio at the end of what was sent; see `RewindableRoute`.
    public func rewind(toFrame frame: Int64) { rewinds.post(frame: frame) }

    /// Stops sending and ends every session.
    public func stop(waiting: Bool = true) {
        thread.stop(waiting: false)
        rewinds.interrupt()
        // This run's links, taken now: a start that comes before they are closed has its own.
        let old = links.withLock { links in defer { links = [] }; return links }
        guard waiting else {
            DispatchQueue.global().async { Self.stop(old) }
            return
        }
        thread.stop(waiting: true)
        Self.stop(old)
    }

    /// Ends `links`' sessions all at once (each TEARDOWN waits up to a second).
    private static func stop(_ links: [AirPlayReceiverLink]) {
        DispatchQueue.concurrentPerform(iterations: links.count) { links[$0].stop() }
    }

    private func stopLinks() { Self.stop(links.withLock { links in defer { links = [] }; return links }) }

    // The pump's thread holds the route while it runs: a route released was stopped, or never
    // started; its links, if any, end with it.
    deinit { Self.stop(links.withLock { $0 }) }

    /// The send-ahead and one packet: the route renders no further.
    public var rendersAhead: Double { Self.sendAhead + Double(Self.framesPerPacket) / Double(format.sampleRate) }

    /// The receivers' addresses (`HOST:PORT`), in the order of `endpoints`.
    public var memberNames: [String] { endpoints.map(\.description) }

    /// Sets one receiver's volume (`index` in `endpoints`), or the group's when `index` is nil; 0 to 1.
    public func setVolume(_ volume: Float, ofMember index: Int?) {
        let volume = min(max(volume, 0), 1)
        settings.withLock { settings in
            if let index { settings.memberVolumes[index] = volume } else { settings.groupVolume = volume }
            settings.volumeGeneration += 1
        }
    }

    /// The volume of receiver `index`, or the group's when `index` is nil; 0 to 1.
    public func volume(ofMember index: Int?) -> Float {
        settings.withLock { settings in index.map { settings.memberVolumes[$0] ?? 1 } ?? settings.groupVolume }
    }

    /// Sends the title, artist, album and artwork to every receiver, and to those that connect later.
    public func nowPlayingDidChange(_ info: NowPlayingInfo) {
        settings.withLock { settings in
            settings.nowPlaying = info
            settings.nowPlayingGeneration += 1
        }
    }

    // MARK: - The route's thread

    /// The stream's next packet, read by a link that opens a session (its RECORD names it).
    final class StreamPosition: @unchecked Sendable {
        private let state: LockedValue<(sequenceNumber: UInt16, rtpTime: UInt32)>
        /// The RTP time of route frame 0.
        let rtpBase: UInt32

        init(sequenceNumber: UInt16, rtpBase: UInt32) {
            self.rtpBase = rtpBase
            state = LockedValue((sequenceNumber, rtpBase))
        }

        /// The next packet's sequence number and RTP time.
        var next: (sequenceNumber: UInt16, rtpTime: UInt32) { state.value }

        func setNext(sequenceNumber: UInt16, frame: Int64) {
            state.value = (sequenceNumber, rtpTime(ofFrame: frame))
        }

        /// The RTP time of route frame `frame` (wrapping at 2^32).
        func rtpTime(ofFrame frame: Int64) -> UInt32 { rtpBase &+ UInt32(truncatingIfNeeded: frame) }
    }

    private func pump(thread: RouteThread, source: any RouteRenderSource, links: [AirPlayReceiverLink], history: RAOPPacketHistory, stream: StreamPosition,
                      gate: RouteStartGate?) {
        let sampleRate = Double(format.sampleRate)
        let packetFrames = Self.framesPerPacket
        let aheadFrames = Int64(Self.sendAhead * sampleRate)
        let minimumAheadFrames = Int64(Self.minimumAhead * sampleRate)
        var floats = [Float](repeating: 0, count: packetFrames * 2)
        var position: Int64 = 0
        var sequenceNumber = stream.next.sequenceNumber
        var active: [ObjectIdentifier: RAOPSession] = [:]
        /// The sessions that have not had a sync packet yet.
        var needsFirstSync: Set<ObjectIdentifier> = []
        var isMarkerDue = true
        /// Whether sending stopped in a long pause (the next audio follows a FLUSH).
        var isStreamStopped = false
        /// The frames of silence sent since the timeline stood still.
        var pausedFrames: Int64 = 0
        let pauseSilenceFrames = Int64(Self.pauseSilence * sampleRate)
        var nextSyncAt: UInt64 = 0
        var sentVolumes = -1, sentNowPlaying = -1
        rewinds.reset()

        /// Takes new sessions in, drops the lost.
        func refreshSessions() {
            for link in links {
                if let session = link.takeNewSession() {
                    active[ObjectIdentifier(session)] = session
                    needsFirstSync.insert(ObjectIdentifier(session))
                    // The new session is told the volume and what plays (the others again too).
                    sentVolumes = -1
                    sentNowPlaying = -1
                }
            }
            active = active.filter { $0.value.isConnected }
        }

        func sendSync(first: Bool) {
            let now = HostClock.now()
            let heard = clock.frame(atHostTime: now)
            for (id, session) in active {
                let isFirst = first || needsFirstSync.contains(id)
                session.sendSync(RAOPControlPacket.sync(heardRTPTime: stream.rtpTime(ofFrame: heard), at: NTPTimestamp(hostTime: now), isFirst: isFirst))
            }
            needsFirstSync.removeAll()
            nextSyncAt = now + UInt64(Self.syncInterval * 1e9)
        }

        func sendSettings(rtpTime: UInt32) {
            let current = settings.value
            let volumesChanged = current.volumeGeneration != sentVolumes, playingChanged = current.nowPlayingGeneration != sentNowPlaying
            guard volumesChanged || playingChanged else { return }
            sentVolumes = current.volumeGeneration
            sentNowPlaying = current.nowPlayingGeneration
            for (index, link) in links.enumerated() {
                guard let session = link.session, active[ObjectIdentifier(session)] != nil else { continue }
                if volumesChanged { session.setVolume((current.memberVolumes[index] ?? 1) * current.groupVolume) }
                if playingChanged, let playing = current.nowPlaying { session.setNowPlaying(playing, rtpTime: rtpTime) }
            }
        }

        func sendPacket(_ samples: UnsafeBufferPointer<Int16>, at frame: Int64) {
            let payload = ALACUncompressedFrame.encode(samples, frameCount: packetFrames)
            let packet = RTPAudioPacket(sequenceNumber: sequenceNumber, timestamp: stream.rtpTime(ofFrame: frame), synchronizationSource: stream.rtpBase,
                                        isMarked: isMarkerDue, payload: payload).encoded()
            history.keep(packet, sequenceNumber: sequenceNumber)
            for session in active.values { session.send(packet) }
            isMarkerDue = false
            sequenceNumber &+= 1
            stream.setNext(sequenceNumber: sequenceNumber, frame: frame + Int64(packetFrames))
        }

        /// Sends the lead-in: silent packets up to `frame`.
        func sendLeadIn(before frame: Int64) {
            let silence = [Int16](repeating: 0, count: packetFrames * 2)
            for index in (1...Self.leadInPackets).reversed() {
                silence.withUnsafeBufferPointer { sendPacket($0, at: frame - Int64(index * packetFrames)) }
            }
        }

        /// FLUSHes every receiver at once, from the lead-in before `frame` on; returns the frame the
        /// audio resumes at: `frame`, or later if the answers took so long that its lead-in would
        /// come late. The packets after it are the lead-in, then the audio.
        func flushReceivers(resumingAt frame: Int64) -> Int64 {
            let leadInFrames = Int64(Self.leadInPackets * packetFrames)
            stream.setNext(sequenceNumber: sequenceNumber, frame: frame - leadInFrames)
            let sessions = Array(active.values), rtpTime = stream.rtpTime(ofFrame: frame - leadInFrames), sequence = sequenceNumber
            let failures = LockedValue<[String]>([])
            DispatchQueue.concurrentPerform(iterations: sessions.count) { index in
                do throws(AirPlayError) { try sessions[index].flush(sequenceNumber: sequence, rtpTime: rtpTime) } catch {
                    failures.withLock { $0.append(error.description) }
                }
            }
            for failure in failures.value { logger.warning("\(failure)") }
            HostClock.sleep(untilNanoseconds: HostClock.now() + UInt64(Self.flushSettling * 1e9))
            // Packets from the FLUSH's RTP time on are taken: a later lead-in is too.
            let resume = max(frame, clock.frame(atHostTime: HostClock.now()) + minimumAheadFrames + leadInFrames)
            stream.setNext(sequenceNumber: sequenceNumber, frame: resume - leadInFrames)
            isMarkerDue = true
            sendSync(first: true)
            sendLeadIn(before: resume)
            return resume
        }

        waitForReceivers(links, thread: thread)
        clock.update(frame: 0, heardAtHostTime: gate?.startTime(lead: Self.startLead) { thread.shouldStop } ?? HostClock.now() + UInt64(Self.startLead * 1e9))
        refreshSessions()
        sendSync(first: true)
        sendLeadIn(before: 0)

        while !thread.shouldStop {
            refreshSessions()
            if !needsFirstSync.isEmpty || HostClock.now() >= nextSyncAt { sendSync(first: false) }
            sendSettings(rtpTime: stream.rtpTime(ofFrame: clock.currentFrame()))

            if let target = rewinds.take(), target < position {
                // The audio sent plays as sent; the change comes right after it.
                source.routeDidResume(atFrame: position, afterRewindTo: target)
                logger.debug("\(name): a change at frame \(target) reaches the audio at \(position)")
            }
            // The frame heard now, before the first is due too (negative then): a start waits for
            // its audio until it is due, rather than sending silence while none is heard.
            let heard = clock.frame(atHostTime: HostClock.now())
            if isStreamStopped {
                let (rate, nextChange) = source.timelineRate(atRouteFrame: position)
                if rate == 0 {
                    if let nextChange, nextChange > position {
                        position = nextChange
                        clock.noteFramesRendered(position)
                    } else {
                        idle(until: HostClock.now() + 10_000_000)
                    }
                    continue
                }
                // Playing again after a long pause: a FLUSH and a lead-in start the receivers at
                // the new RTP time (later, if the timeline plays again too soon for them).
                let resume = flushReceivers(resumingAt: max(position, heard + minimumAheadFrames + Int64(Self.leadInPackets * packetFrames)))
                if resume > position { source.routeDidResume(atFrame: resume, afterRewindTo: position) }
                position = resume
                clock.noteFramesRendered(position)
                isStreamStopped = false
            }
            guard position < heard + aheadFrames else {
                idle(until: min(nextSyncAt, clock.hostTime(ofFrame: position - aheadFrames + Int64(packetFrames))))
                continue
            }
            // One packet: the timeline's stretches in it, silence where it stands still.
            var frame = position, isWaiting = false, isAllPaused = true
            floats.withUnsafeMutableBufferPointer { pointer in
                for index in pointer.indices { pointer[index] = 0 }
            }
            while frame < position + Int64(packetFrames) {
                let (rate, nextChange) = source.timelineRate(atRouteFrame: frame)
                let end = min(position + Int64(packetFrames), nextChange.map { $0 > frame ? $0 : .max } ?? .max)
                let count = Int(end - frame)
                if rate != 0 {
                    isAllPaused = false
                    let queued = source.queuedFrameCount(fromRouteFrame: frame) ?? Int64(count)
                    // Not queued yet (a seek's audio comes a few milliseconds after it): waited
                    // for while it can still arrive in time; after that it goes as silence.
                    if queued < Int64(count) && position > heard + minimumAheadFrames {
                        isWaiting = true
                        break
                    }
                    let offset = Int(frame - position) * 2
                    floats.withUnsafeMutableBufferPointer { pointer in
                        _ = source.render(into: UnsafeMutableBufferPointer(rebasing: pointer[offset..<(offset + count * 2)]), frameCount: count, atRouteFrame: frame)
                    }
                }
                frame = end
            }
            if isWaiting {
                idle(until: HostClock.now() + 5_000_000)
                continue
            }
            pausedFrames = isAllPaused ? pausedFrames + Int64(packetFrames) : 0
            if pausedFrames > pauseSilenceFrames {
                // Paused for long: the receivers play out the silence sent and wait.
                isStreamStopped = true
                continue
            }
            let samples = Self.int16Samples(floats)
            samples.withUnsafeBufferPointer { sendPacket($0, at: position) }
            position += Int64(packetFrames)
            clock.noteFramesRendered(position)
        }
    }

    /// Waits on the rewind signal until `deadline` (a rewind that wakes it is kept for the loop).
    private func idle(until deadline: UInt64) {
        let capped = min(deadline, HostClock.now() + 10_000_000)
        if let target = rewinds.wait(untilNanoseconds: capped) { rewinds.post(frame: target) }
    }

    /// Waits until every receiver is connected, or `startTimeout` passes.
    private func waitForReceivers(_ links: [AirPlayReceiverLink], thread: RouteThread) {
        let deadline = HostClock.now() + UInt64(Self.startTimeout * 1e9)
        while !thread.shouldStop && links.contains(where: { $0.session == nil }) && HostClock.now() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        for link in links where link.session == nil {
            logger.warning("\(link.lastFailure ?? "\(link.receiverName): no answer yet"); not connected at the start, it joins when it is")
        }
    }

    /// The renderer's Float32 samples as 16-bit, rounded to nearest and clipped (exact for 16-bit sources).
    static func int16Samples(_ floats: some Sequence<Float>) -> [Int16] {
        floats.map { Int16(max(-32768, min(32767, ($0 * 32768).rounded(.toNearestOrEven)))) }
    }
}
