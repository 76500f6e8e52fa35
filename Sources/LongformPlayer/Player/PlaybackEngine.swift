import LongformRendering
import Synchronization

/// The chain every surface plays through, assembled in one place: a route, the `AudioRenderer`
/// that plays to it, the `RenderSynchronizer` whose timeline follows the route's clock, and the
/// `SampleBufferPlayer` that feeds them. It owns the rules that span them: where the volume is
/// applied (as the renderer's gain, or on a `GroupVolumeRoute` as the group's volume, heard at
/// once rather than after the audio sent ahead) and switching routes under a playing renderer.
///
/// Surfaces (`play`, `serve`, `render`, the benchmarks) drive the player through `player` and
/// change the route and the volume only here. Thread-safe.
public final class PlaybackEngine: Sendable {
    /// The playlist and its commands.
    public let player: SampleBufferPlayer
    /// The renderer playing to `route`.
    public let renderer: AudioRenderer
    /// The timeline, on the route's clock once `start()` has run.
    public let synchronizer: RenderSynchronizer
    /// The volume and mute asked for, applied to every route the engine plays to.
    private let volumeSetting: Mutex<(volume: Float, isMuted: Bool)>

    /// An engine playing to `route`, not started; `lookAheadDuration` nil keeps the route's own,
    /// `readsTagsAhead` false for a run that shows no playlist (see `SampleBufferPlayer`).
    public init(route: any AudioRoute, lookAheadDuration: Double? = nil, readsTagsAhead: Bool = true, volume: Float = 1, isMuted: Bool = false) {
        renderer = AudioRenderer(route: route)
        if let lookAheadDuration { renderer.lookAheadDuration = lookAheadDuration }
        synchronizer = RenderSynchronizer()
        player = SampleBufferPlayer(renderer: renderer, synchronizer: synchronizer, readsTagsAhead: readsTagsAhead)
        volumeSetting = Mutex((volume, isMuted))
        Self.apply(volume: volume, isMuted: isMuted, to: route, renderer: renderer)
    }

    /// The route the renderer plays to.
    public var route: any AudioRoute { renderer.route }

    /// The route as a group of outputs with volumes of their own, when it is one.
    public var groupRoute: (any GroupVolumeRoute)? { renderer.route as? any GroupVolumeRoute }

    /// Starts the route and puts the timeline on its clock.
    public func start() throws(RouteError) {
        try synchronizer.addRenderer(renderer)
    }

    /// Stops the player and the route at once.
    public func stop() {
        player.invalidate()
        synchronizer.removeRenderer(renderer, at: .invalid)
    }

    /// The volume and mute asked for (0 to 1).
    public var volume: (volume: Float, isMuted: Bool) { volumeSetting.withLock { $0 } }

    /// Sets the volume (0 to 1) and mute where they are heard at once.
    public func setVolume(_ volume: Float, isMuted: Bool) {
        volumeSetting.withLock { setting in
            setting = (volume, isMuted)
            Self.apply(volume: volume, isMuted: isMuted, to: renderer.route, renderer: renderer)
        }
    }

    /// Moves playback to `newRoute` at the same time and rate, its volume applied before it
    /// renders anything; if it cannot start, playback goes back to the route before and the
    /// error is thrown, so that a failed switch changes nothing.
    public func setRoute(_ newRoute: any AudioRoute) throws(RouteError) {
        try volumeSetting.withLock { (setting) throws(RouteError) in
            let previous = renderer.route
            Self.apply(volume: setting.volume, isMuted: setting.isMuted, to: newRoute, renderer: renderer)
            do throws(RouteError) {
                try renderer.setRoute(newRoute)
            } catch {
                Self.apply(volume: setting.volume, isMuted: setting.isMuted, to: previous, renderer: renderer)
                try? renderer.setRoute(previous)
                throw error
            }
        }
    }

    /// The volume rule: a group of outputs takes the volume (muted: 0) and the renderer plays at
    /// full gain; any other route takes it as the renderer's gain.
    private static func apply(volume: Float, isMuted: Bool, to route: any AudioRoute, renderer: AudioRenderer) {
        if let group = route as? any GroupVolumeRoute {
            renderer.volume = 1
            renderer.isMuted = false
            group.setVolume(isMuted ? 0 : volume, ofMember: nil)
        } else {
            renderer.volume = volume
            renderer.isMuted = isMuted
        }
    }
}
