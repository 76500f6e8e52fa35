import LongformCore

/// How a route consumes audio.
public enum RoutePacing: Sendable, Equatable {
    /// In step with a real clock (a device, or the host clock for the null route).
    case realTime
    /// As fast as the renderer supplies audio; the timeline follows the frames written.
    case asFastAsPossible
}

/// A clocked audio sink: the one protocol every output implements (null, WAV, PulseAudio, ALSA,
/// later network speakers). A route pulls interleaved Float32 frames in its own `format` from a
/// render source on its own thread, and reports through its `clock` which frame is heard when.
public protocol AudioRoute: AnyObject, Sendable {
    /// The route as the user names it (`"pulse:alsa_output.pci"`, `"wav:/tmp/out.wav"`).
    var name: String { get }
    /// The format it plays: interleaved Float32 at the route's rate and channel count.
    var format: AudioFormat { get }
    /// Whether it plays in real time or as fast as possible.
    var pacing: RoutePacing { get }
    /// How much audio a renderer should keep enqueued ahead of the playhead, in seconds.
    var preferredLookAhead: Double { get }
    /// Which route frame is heard when; valid from `start` on.
    var clock: RouteClock { get }
    /// Starts pulling audio from `source` on the route's own thread.
    func start(pullingFrom source: any RouteRenderSource) throws(RouteError)
    /// Stops pulling and releases the device; returns once the route's thread has finished,
    /// unless `waiting` is false or it is called from that thread. A stopped route can start again.
    func stop(waiting: Bool)
}

/// A real-time route that can take back audio it was handed but has not played yet (a device
/// buffer it rewinds, a server stream it flushes). A timeline change or a cut in the queued audio
/// then reaches the output within the route's margin, however much audio the route holds; so the
/// route can hold a lot, and wake up rarely.
///
/// Contract: after `rewind(toFrame:)` the route renders again from `frame`. When its device
/// cannot discard exactly there and resumes at an earlier frame, it plays the frames before
/// `frame` as it did before, from its own copy of what it wrote: the renderer's queue may no
/// longer hold their audio (a flush empties it, and a client may enqueue other audio at the same
/// media times).
/// Its clock's `rewindMarginFrames` says how close to the frame heard now a rewind can reach.
public protocol RewindableRoute: AudioRoute {
    /// Discards what the route holds from route frame `frame` on and renders it again; returns at once.
    func rewind(toFrame frame: Int64)
    /// The source queued more audio: a route that wrote all it had and waits for its buffer to run
    /// low writes it now instead, so that the buffer it holds grows from the first enqueue (at a
    /// start it holds only the preroll, and a late wake-up then runs the device dry). Returns at once.
    func sourceDidQueueAudio()
}

extension RewindableRoute {
    /// A route that never waits for audio has nothing to do.
    public func sourceDidQueueAudio() {}
}

/// What a route pulls audio from: the renderer. `render` is the one thing every route needs; the
/// rest serve real-time routes that take audio back or send the timeline on (rewindable routes, a
/// network speaker), and have defaults for a source that has no timeline. An as-fast-as-possible
/// route pulls through an `OfflineRenderDriver` instead, which needs nothing more from it.
public protocol RouteRenderSource: AnyObject, Sendable {
    /// Fills `buffer` with `frameCount` interleaved frames that start at route frame `routeFrame`
    /// (silence where there is no audio); returns `frameCount`.
    func render(into buffer: UnsafeMutableBufferPointer<Float>, frameCount: Int, atRouteFrame routeFrame: Int64) -> Int
    /// Called by a rewindable route that resumed at `frame` after a rewind to `target` (later, as
    /// its thread came late or its device could not take back that much): timeline changes placed
    /// in between move to `frame`, so that what was heard meanwhile stays the truth.
    func routeDidResume(atFrame frame: Int64, afterRewindTo target: Int64)
    /// How many frames from route frame `routeFrame` on are queued audio now; nil when what would
    /// render there will not change (the timeline stands still, or no more audio is coming). A
    /// rewindable route with a large buffer writes no further ahead than this while it has enough,
    /// so that it does not write silence it must take back when the audio arrives.
    func queuedFrameCount(fromRouteFrame routeFrame: Int64) -> Int64?
    /// The timeline's rate at route frame `routeFrame` and the frame of its next change (nil: none
    /// planned): a route that sends anchors instead of silence (a network speaker) sends "rate 0"
    /// for a pause and does not render it, and starts again where the rate does.
    func timelineRate(atRouteFrame routeFrame: Int64) -> (rate: Double, nextChangeFrame: Int64?)
}

extension RouteRenderSource {
    /// No timeline to move: nothing to do.
    public func routeDidResume(atFrame frame: Int64, afterRewindTo target: Int64) {}
    /// Unknown: what renders may change at any time.
    public func queuedFrameCount(fromRouteFrame routeFrame: Int64) -> Int64? { nil }
    /// Playing at rate 1, no change planned.
    public func timelineRate(atRouteFrame routeFrame: Int64) -> (rate: Double, nextChangeFrame: Int64?) { (1, nil) }
}

/// Why a route could not open or play.
public struct RouteError: Error, CustomStringConvertible, Sendable {
    /// The route.
    public var route: String
    /// What went wrong, in the audio system's own words where it has them.
    public var reason: String

    /// An error of `route`.
    public init(route: String, reason: String) {
        self.route = route
        self.reason = reason
    }

    /// `"pulse: Connection refused"`.
    public var description: String { "\(route): \(reason)" }
}

/// What plays now, as the player tells a route that shows it.
public struct NowPlayingInfo: Sendable, Equatable {
    /// The item's title (its file name when untagged).
    public var title: String
    /// Its artist, or empty.
    public var artist: String
    /// Its album, or empty.
    public var album: String
    /// Its embedded cover art, if it has one.
    public var artwork: NowPlayingArtwork?

    /// `title` by `artist` from `album`, with `artwork`.
    public init(title: String, artist: String = "", album: String = "", artwork: NowPlayingArtwork? = nil) {
        self.title = title
        self.artist = artist
        self.album = album
        self.artwork = artwork
    }
}

/// A picture's bytes (an image file's, as embedded) and MIME type.
public struct NowPlayingArtwork: Sendable, Equatable {
    /// `image/jpeg` or `image/png`.
    public var mimeType: String
    /// The image file's bytes.
    public var data: [UInt8]

    /// `data`, of type `mimeType`.
    public init(mimeType: String, data: [UInt8]) {
        self.mimeType = mimeType
        self.data = data
    }
}

/// A route that shows what plays (a network speaker's display and log): told by the player when
/// the current item changes.
public protocol NowPlayingRoute: AudioRoute {
    /// The item heard now is `info`'s.
    func nowPlayingDidChange(_ info: NowPlayingInfo)
}

/// A route that can run an action at an exact output frame: the WAV route, on which scripted
/// edits take effect at the frame they name.
public protocol FrameActionRoute: AudioRoute {
    /// Runs `action` on the route's thread when the output reaches `frame`, before any later frame
    /// is rendered; actions at one frame run in the order they were added.
    func perform(atFrame frame: Int64, _ action: @escaping @Sendable () -> Void)
    /// Forgets the actions not yet run.
    func removeAllActions()
}
