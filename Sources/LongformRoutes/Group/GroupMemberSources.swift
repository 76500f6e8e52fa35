import Logging
import LongformCore
import LongformRendering

/// What a group's leading member pulls from: the renderer, through it, each frame rendered kept
/// for the members that follow (`RenderedAudio`).
final class LeaderSource: RouteRenderSource, @unchecked Sendable {
    private let source: any RouteRenderSource
    private let audio: LockedValue<RenderedAudio>
    private let clock: RouteClock

    /// Pulls from `source`, keeping what it renders in `audio`; `clock` is the group's.
    init(source: any RouteRenderSource, audio: LockedValue<RenderedAudio>, clock: RouteClock) {
        self.source = source
        self.audio = audio
        self.clock = clock
    }

    func render(into buffer: UnsafeMutableBufferPointer<Float>, frameCount: Int, atRouteFrame routeFrame: Int64) -> Int {
        let (channels, generation) = audio.withLock { ($0.channelCount, $0.generation) }
        let count = source.render(into: buffer, frameCount: frameCount, atRouteFrame: routeFrame)
        clock.noteFramesRendered(routeFrame + Int64(count))
        // What was heard more than a second ago no member reads again.
        let heard = clock.isRunning ? clock.currentFrame() : 0
        audio.withLock { audio in
            audio.record(UnsafeBufferPointer(rebasing: buffer[0..<(count * channels)]), at: routeFrame, renderedInGeneration: generation)
            audio.discard(before: heard - Int64(clock.sampleRate))
        }
        return count
    }

    func routeDidResume(atFrame frame: Int64, afterRewindTo target: Int64) {
        audio.withLock { $0.confirm(before: frame) }
        source.routeDidResume(atFrame: frame, afterRewindTo: target)
    }

    func queuedFrameCount(fromRouteFrame routeFrame: Int64) -> Int64? { source.queuedFrameCount(fromRouteFrame: routeFrame) }

    func timelineRate(atRouteFrame routeFrame: Int64) -> (rate: Double, nextChangeFrame: Int64?) { source.timelineRate(atRouteFrame: routeFrame) }
}

/// What a group's following member pulls from: the audio the leader rendered, frame for frame,
/// and the renderer's timeline (where it stands still, the follower plays silence of its own).
final class FollowerSource: RouteRenderSource, @unchecked Sendable {
    private let source: any RouteRenderSource
    private let audio: LockedValue<RenderedAudio>
    private let memberName: String
    private let logger = Logger(label: LogLabel.routeGroup)

    /// Reads `audio`, recorded from `source` by the leader, for the member `memberName`.
    init(source: any RouteRenderSource, audio: LockedValue<RenderedAudio>, memberName: String) {
        self.source = source
        self.audio = audio
        self.memberName = memberName
    }

    func render(into buffer: UnsafeMutableBufferPointer<Float>, frameCount: Int, atRouteFrame routeFrame: Int64) -> Int {
        let copied = audio.withLock { $0.read(into: buffer, from: routeFrame, count: frameCount) }
        if copied < frameCount { logger.debug("\(memberName): \(frameCount - copied) frames from \(routeFrame) not rendered by the group's leader; silence") }
        return frameCount
    }

    /// The leader's resumes move the timeline; a follower's would move it under audio the leader
    /// already sent, so it plays on with the leader's audio instead (the group's margin is the
    /// largest of its members', and such a resume is rare: a late thread).
    func routeDidResume(atFrame frame: Int64, afterRewindTo target: Int64) {
        logger.debug("\(memberName): resumed at frame \(frame) after a rewind to \(target); it plays the leader's audio from there")
    }

    /// The frames the leader rendered from `routeFrame` on, where the timeline plays; the
    /// renderer's answer where it stands still.
    func queuedFrameCount(fromRouteFrame routeFrame: Int64) -> Int64? {
        if source.timelineRate(atRouteFrame: routeFrame).rate == 0 { return source.queuedFrameCount(fromRouteFrame: routeFrame) }
        return audio.withLock { $0.readableFrameCount(from: routeFrame) }
    }

    func timelineRate(atRouteFrame routeFrame: Int64) -> (rate: Double, nextChangeFrame: Int64?) { source.timelineRate(atRouteFrame: routeFrame) }
}
