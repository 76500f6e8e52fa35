import Logging
import LongformCore
import LongformRendering
import LongformSpeakerProtocol
import Synchronization

/// What a speaker's local route pulls: the session's rendering, for the time the route says each
/// period is heard. The session's lock is held only to render (the network decodes audio before
/// taking it), so the route's thread never waits on I/O.
final class SpeakerOutput: RouteRenderSource, @unchecked Sendable {
    private let session: LockedSession
    private unowned let route: any AudioRoute
    /// How far ahead a route that cannot take back what it holds may write: changes are heard after this.
    private let lookAheadFrames: Int64
    /// Whether the route can take back what it holds (asked once: a dynamic cast in every period
    /// was 2 % of a playing speaker's route thread).
    private let isRewindable: Bool
    /// The anchor the log last said started late (the route's thread alone reads and writes it).
    private var loggedLateAnchor: RateAnchor?
    private let logger = Logger(label: "longform.speaker")

    init(session: LockedSession, route: any AudioRoute) {
        self.session = session
        self.route = route
        lookAheadFrames = Int64(route.format.sampleRate / 5)
        isRewindable = route is any RewindableRoute
    }

    /// The first route frame a change can still reach, for a route that can take back what it
    /// holds (a PulseAudio server holds seconds); nil for one that cannot.
    var firstChangeableFrame: Int64? { isRewindable ? route.clock.earliestChangeableFrame() : nil }

    /// Has the route render again from route frame `frame` (or the first it can still change).
    func rewind(toFrame frame: Int64) {
        guard let rewindable = route as? any RewindableRoute else { return }
        rewindable.rewind(toFrame: max(frame, route.clock.earliestChangeableFrame()))
    }

    func render(into buffer: UnsafeMutableBufferPointer<Float>, frameCount: Int, atRouteFrame routeFrame: Int64) -> Int {
        let heardAt = route.clock.hostTime(ofFrame: routeFrame)
        let channels = route.format.channelCount
        let placement = firstChangeableFrame.map { OutputPlacement(frame: routeFrame, firstChangeableFrame: $0) }
        let frameDuration = 1e9 / (Double(route.format.sampleRate) * route.clock.rate)
        let (samples, lateStart, streamRate) = session.withLock {
            $0.outputFrameDuration = frameDuration
            return ($0.render(frameCount: frameCount, outputChannels: channels, heardAt: heardAt, placement: placement), $0.lateStart, $0.format?.sampleRate)
        }
        if let lateStart, lateStart.anchor != loggedLateAnchor {
            // Once an anchor: a rewind renders its start again.
            loggedLateAnchor = lateStart.anchor
            let milliseconds = Double(lateStart.skippedFrames) * 1_000 / Double(streamRate ?? UInt32(route.format.sampleRate))
            logger.info("speaker: the anchor from frame \(lateStart.anchor.mediaFrame) reached the output \(String(cFormat: "%.1f", milliseconds)) ms after its moment; it plays in step from \(lateStart.anchor.mediaFrame + lateStart.skippedFrames), \(lateStart.skippedFrames) frames held before it not played")
        }
        _ = buffer.update(fromContentsOf: samples.prefix(buffer.count))
        return frameCount
    }

    /// A route that can take back what it holds renders the audio the speaker has (seconds on
    /// PulseAudio; changes reach it by rewinds), and no silence past it while more is coming; one
    /// that cannot holds little.
    func queuedFrameCount(fromRouteFrame routeFrame: Int64) -> Int64? {
        guard isRewindable else { return lookAheadFrames }
        return session.withLock { $0.playableFrameCount }
    }
}
