import Logging

/// The swift-log label of each component, so that a handler can turn each up or down.
public enum LogLabel {
    /// Opening and decoding sources.
    public static let source = "longform.source"
    /// The audio renderer's state changes, flushes and route changes.
    public static let renderer = "longform.renderer"
    /// One message per enqueued buffer; off unless switched on.
    public static let enqueue = "longform.renderer.enqueue"
    /// The synchronizer's rate changes and observers.
    public static let synchronizer = "longform.synchronizer"
    /// Routes opening, underruns and latency.
    public static let route = "longform.route"
    /// The speaker route: connections to network speakers, flushes, anchors.
    public static let speakerRoute = "longform.route.speaker"
    /// The AirPlay route: sessions with receivers, flushes, resends.
    public static let airPlayRoute = "longform.route.airplay"
    /// A group of routes of different kinds (speakers and AirPlay receivers) playing one timeline.
    public static let routeGroup = "longform.route.group"
    /// The player's transport and playlist edits.
    public static let player = "longform.player"
    /// The serializer's enqueueing, flushes and item changes.
    public static let serializer = "longform.player.serializer"
    /// Scanning the music directories.
    public static let library = "longform.library"
    /// `longform serve`: requests, the event stream, saving state.
    public static let server = "longform.server"
    /// The command line.
    public static let command = "longform.command"
}
