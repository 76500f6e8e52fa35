import LongformCore

/// Drives an as-fast-as-possible route (a file written faster than real time): pulls from its
/// renderer as fast as audio comes, runs the frame actions due and the time observers between two
/// writes (never inside one), and hands each block to the route to store. The route only stores:
/// it never calls back into the renderer or its synchronizer, and an observer's block may change
/// the route or remove the renderer (the driver stops waiting for the block once the route is
/// asked to stop).
///
/// The route's clock follows the frames written: what the timeline says is heard is what is in
/// the file. Runs on the route's thread, in `run`.
public struct OfflineRenderDriver {
    /// Frames per write at most.
    public static let periodFrames = 8192

    /// The route's format.
    public let format: AudioFormat
    /// The route's clock, told of every frame written.
    public let clock: RouteClock
    /// The actions to run at exact output frames.
    public let actions: FrameActionSchedule

    /// A driver for a route of `format` whose clock is `clock` and actions `actions`.
    public init(format: AudioFormat, clock: RouteClock, actions: FrameActionSchedule) {
        self.format = format
        self.clock = clock
        self.actions = actions
    }

    /// Pulls from `source` and writes until `shouldStop` turns true, or `write` throws (which it
    /// rethrows). A source other than an `AudioRenderer` is pulled in real-time fashion (every
    /// frame rendered) and has no observers.
    public func run(pullingFrom source: any RouteRenderSource, shouldStop: () -> Bool,
                    write: (UnsafeBufferPointer<Float>) throws -> Void) rethrows {
        let renderer = source as? AudioRenderer
        let channels = format.channelCount
        var buffer = [Float](repeating: 0, count: Self.periodFrames * channels)
        var frame: Int64 = 0
        while !shouldStop() {
            let nextAction = actions.runDue(atFrame: frame)
            if shouldStop() { break }
            var count = Self.periodFrames
            if let nextAction { count = min(count, Int(nextAction - frame)) }
            // Observers due at the current position (one added exactly at the playhead) fire before
            // the audio moves on.
            renderer?.runDueObservers(abandoningIf: shouldStop)
            if shouldStop() { break }
            var rendered = buffer.withUnsafeMutableBufferPointer { samples in
                renderer?.renderAsFastAsPossible(into: samples, frameCount: count, atRouteFrame: frame)
                    ?? source.render(into: samples, frameCount: count, atRouteFrame: frame)
            }
            if rendered == 0, let renderer {
                // Read the actions again: an observer that ran may have removed them (the playlist ended).
                guard let next = actions.nextFrame, next > frame, renderer.isTimelineStopped else {
                    renderer.waitForRenderableAudio(timeoutSeconds: 0.05)
                    continue
                }
                // Paused with an action ahead: the listener hears silence until then.
                buffer.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
                rendered = min(count, Int(next - frame))
            }
            try buffer.withUnsafeBufferPointer { try write(UnsafeBufferPointer(rebasing: $0[0..<(rendered * channels)])) }
            frame += Int64(rendered)
            clock.noteFramesRendered(frame)
            // What the frames written reach fires now, before the actions of the next turn.
            renderer?.runDueObservers(abandoningIf: shouldStop)
        }
    }
}
