import Logging
import LongformCore
import LongformRendering

/// Writes exactly what would be heard to a WAV file, either paced in real time or as fast as
/// possible. As fast as possible, an `OfflineRenderDriver` pulls and the route only writes; the
/// timeline follows the frames written and the latency is zero.
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
    private let actions = FrameActionSchedule()

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
        actions.add(atFrame: frame, action)
    }

    /// Forgets the actions not yet run.
    public func removeAllActions() { actions.removeAll() }

    public func start(pullingFrom source: any RouteRenderSource) throws(RouteError) {
        let writer: WAVFileWriter
        do {
            writer = try WAVFileWriter(path: path, sampleRate: format.sampleRate, channelCount: format.channelCount, sampleFormat: sampleFormat)
        } catch {
            throw RouteError(route: name, reason: error.reason)
        }
        let format = format, clock = clock, pacing = pacing, logger = logger, writeError = writeError, name = name, actions = actions
        thread.start(name: "longform.route.wav", clock: clock) { thread in
            /// Writes `samples`; false, with the error kept, when writing failed.
            func write(_ samples: UnsafeBufferPointer<Float>) -> Bool {
                do {
                    try writer.write(samples)
                    return true
                } catch {
                    logger.error("\(name): write failed: \(error.reason)")
                    writeError.value = writeError.value ?? error.description
                    return false
                }
            }
            if pacing == .asFastAsPossible {
                let driver = OfflineRenderDriver(format: format, clock: clock, actions: actions)
                try? driver.run(pullingFrom: source, shouldStop: { thread.shouldStop }) { samples in
                    guard write(samples) else { throw WriteFailed() }
                }
            } else {
                // Real time: a period every 50 ms (as snapclient's file player), the actions due
                // run before it. A file hears nothing sooner for shorter periods, and at 10 ms the
                // wake-ups were a third of what a speaker writing a file cost.
                let period = format.sampleRate * Int(Self.realTimePeriodMilliseconds) / 1_000
                var buffer = [Float](repeating: 0, count: period * format.channelCount)
                let start = HostClock.now() + 1_000_000
                var frame: Int64 = 0
                while !thread.shouldStop {
                    let nextAction = actions.runDue(atFrame: frame)
                    if thread.shouldStop { break }
                    var count = period
                    if let nextAction { count = min(count, Int(nextAction - frame)) }
                    let heardAt = start + UInt64(frame) * 1_000_000_000 / UInt64(format.sampleRate)
                    clock.update(frame: frame, heardAtHostTime: heardAt)
                    HostClock.sleep(untilNanoseconds: heardAt)
                    let rendered = buffer.withUnsafeMutableBufferPointer { source.render(into: $0, frameCount: count, atRouteFrame: frame) }
                    guard buffer.withUnsafeBufferPointer({ write(UnsafeBufferPointer(rebasing: $0[0..<(rendered * format.channelCount)])) }) else { break }
                    frame += Int64(rendered)
                    clock.noteFramesRendered(frame)
                }
            }
            do throws(WAVFileError) { try writer.close() } catch {
                writeError.value = writeError.value ?? error.description
            }
        }
    }

    /// How much a real-time route writes at a time (ms).
    public static let realTimePeriodMilliseconds = 50

    /// Ends an as-fast-as-possible run whose write failed (the error is kept in `writeError`).
    private struct WriteFailed: Error {}

    /// Stops pulling; see `AudioRoute.stop(waiting:)`.
    public func stop(waiting: Bool = true) { thread.stop(waiting: waiting) }
}
