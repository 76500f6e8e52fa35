import Foundation
import Logging
import LongformCore
import LongformRendering

/// Writes exactly what would be heard to a WAV file, either paced in real time or as fast as
/// possible. As fast as possible, the timeline follows the frames written and the latency is zero.
public final class WAVFileRoute: FrameActionRoute, @unchecked Sendable {
    public let name: String
    public let format: AudioFormat
    public let pacing: RoutePacing
    public let preferredLookAhead: Double
    public let clock: RouteClock
    /// The file.
    public let path: String
    /// How samples are stored in the file.
    public let sampleFormat: OutputSampleFormat
    private let thread = RestartableRouteThread()
    private let logger = Logger(label: LogLabel.route)
    private let writeError = LockedValue<String?>(nil)
    private let actions = LockedValue<[ScheduledAction]>([])

    /// A route to `path`. `lookAhead` defaults to 2 s real-time and 10 s as fast as possible.
    public init(path: String, sampleRate: Int = 44_100, channelCount: Int = 2, sampleFormat: OutputSampleFormat = .s16,
                pacing: RoutePacing = .asFastAsPossible, lookAhead: Double? = nil) {
        self.name = "wav:" + path
        self.path = path
        self.format = AudioFormat(sampleRate: sampleRate, channelCount: channelCount)
        self.sampleFormat = sampleFormat
        self.pacing = pacing
        self.preferredLookAhead = lookAhead ?? (pacing == .realTime ? 2 : 10)
        self.clock = RouteClock(sampleRate: sampleRate, isDrivenByFramesWritten: pacing == .asFastAsPossible)
    }

    /// The first write error, if writing failed (the file is then incomplete).
    public var error: String? { writeError.value }

    /// Runs `action` on the route's thread when the output reaches `frame` (frames written since
    /// the route started): after every frame before it is written and before any later frame is
    /// rendered, so that what the action changes is heard from exactly that frame on. Actions at
    /// the same frame run in the order they were added. While the timeline stands still, an
    /// as-fast-as-possible route writes silence up to its next action instead of waiting.
    public func perform(atFrame frame: Int64, _ action: @escaping @Sendable () -> Void) {
        actions.withLock { actions in
            let index = actions.firstIndex { $0.frame > frame } ?? actions.endIndex
            actions.insert(ScheduledAction(frame: frame, action: action), at: index)
        }
    }

    /// Forgets the actions not yet run.
    public func removeAllActions() { actions.withLock { $0.removeAll() } }

    private struct ScheduledAction: Sendable {
        var frame: Int64
        var action: @Sendable () -> Void
    }

    public func start(pullingFrom source: any RouteRenderSource) throws(RouteError) {
        let writer: WAVFileWriter
        do {
            writer = try WAVFileWriter(path: path, sampleRate: format.sampleRate, channelCount: format.channelCount, sampleFormat: sampleFormat)
        } catch {
            throw RouteError(route: name, reason: "cannot create the file (\(error.localizedDescription))")
        }
        let format = format, clock = clock, pacing = pacing, logger = logger, writeError = writeError, name = name, actions = actions
        thread.start(name: "longform.route.wav", clock: clock) { thread in
            let period = pacing == .realTime ? format.sampleRate / 100 : 8192
            var buffer = [Float](repeating: 0, count: period * format.channelCount)
            let start = HostClock.now() + 1_000_000
            var frame: Int64 = 0
            /// Runs the actions due at `frame`; returns the frame of the next one.
            func runActions() -> Int64? {
                while true {
                    let due = actions.withLock { actions -> (@Sendable () -> Void)? in
                        guard let first = actions.first, first.frame <= frame else { return nil }
                        return actions.removeFirst().action
                    }
                    guard let due else { return actions.withLock { $0.first?.frame } }
                    due()
                }
            }
            while !thread.shouldStop {
                let nextAction = runActions()
                if thread.shouldStop { break }
                var count = period
                if let nextAction { count = min(count, Int(nextAction - frame)) }
                if pacing == .realTime {
                    let heardAt = start + UInt64(frame) * 1_000_000_000 / UInt64(format.sampleRate)
                    clock.update(frame: frame, heardAtHostTime: heardAt)
                    HostClock.sleep(untilNanoseconds: heardAt)
                }
                var rendered = buffer.withUnsafeMutableBufferPointer { source.render(into: $0, frameCount: count, atRouteFrame: frame) }
                if rendered == 0 {
                    // Read the actions again: an observer that ran inside the render may have
                    // removed them (the playlist ended).
                    guard let next = actions.withLock({ $0.first?.frame }), next > frame, source.isTimelineStopped else {
                        source.waitForRenderableAudio(timeoutSeconds: 0.05)
                        continue
                    }
                    // Paused with an action ahead: the listener hears silence until then.
                    buffer.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
                    rendered = min(count, Int(next - frame))
                }
                do {
                    try buffer.withUnsafeBufferPointer { try writer.write(UnsafeBufferPointer(rebasing: $0[0..<(rendered * format.channelCount)])) }
                } catch {
                    logger.error("\(name): write failed: \(error.localizedDescription)")
                    writeError.value = writeError.value ?? error.localizedDescription
                    break
                }
                frame += Int64(rendered)
                clock.noteFramesRendered(frame)
                if pacing == .asFastAsPossible { source.routeDidAdvance(toFrame: frame) }
            }
            do { try writer.close() } catch {
                writeError.value = writeError.value ?? error.localizedDescription
            }
        }
    }

    /// Stops pulling; see `AudioRoute.stop(waiting:)`.
    public func stop(waiting: Bool = true) { thread.stop(waiting: waiting) }
}
