import LongformRendering
import Synchronization

/// What a speaker's local route pulls: the session's rendering, for the time the route says each
/// period is heard. The session's lock is held only to render (the network decodes audio before
/// taking it), so the route's thread never waits on I/O.
final class SpeakerOutput: RouteRenderSource, @unchecked Sendable {
    private let session: LockedSession
    private unowned let route: any AudioRoute
    /// How far ahead a route that could hold seconds may write: anchors and flushes are heard
    /// within this (until the speaker rewinds its route on a change, a later step).
    private let lookAheadFrames: Int64

    init(session: LockedSession, route: any AudioRoute) {
        self.session = session
        self.route = route
        lookAheadFrames = Int64(route.format.sampleRate / 5)
    }

    func render(into buffer: UnsafeMutableBufferPointer<Float>, frameCount: Int, atRouteFrame routeFrame: Int64) -> Int {
        let heardAt = route.clock.hostTime(ofFrame: routeFrame)
        let channels = route.format.channelCount
        let samples = session.withLock { $0.render(frameCount: frameCount, outputChannels: channels, heardAt: heardAt) }
        _ = buffer.update(fromContentsOf: samples.prefix(buffer.count))
        return frameCount
    }

    func routeDidAdvance(toFrame frame: Int64) {}
    var isTimelineStopped: Bool { false }
    func waitForRenderableAudio(timeoutSeconds: Double) {}
    func routeDidResume(atFrame frame: Int64, afterRewindTo target: Int64) {}
    func queuedFrameCount(fromRouteFrame routeFrame: Int64) -> Int64? { lookAheadFrames }
    func timelineRate(atRouteFrame routeFrame: Int64) -> (rate: Double, nextChangeFrame: Int64?) { (1, nil) }
}
