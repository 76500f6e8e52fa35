import Foundation
import Logging
import LongformCore

/// A network item decoded ahead on a thread of its own, so that the player never waits on the
/// network: `read()` answers at once with a buffer, "not yet" or the end. The thread opens the
/// URL, decodes up to `aheadSeconds` beyond what was taken, and when the stream stalls (a packet
/// not whole within `stallTimeoutSeconds`, also while bytes trickle in) connects again and goes on
/// from the frame it reached, at most `retryLimit` times; after that the item fails, named, with
/// what was decoded before the stall still delivered. Memory is bounded by `aheadSeconds` of
/// decoded audio; closing ends a network read under way.
///
/// `read()` and `takeMetadata()` are for one caller (the player's queue); the thread is its own.
public final class ReadAheadSource: @unchecked Sendable {
    /// What `read()` found.
    public enum Read: Sendable {
        /// The next buffer, with item-relative times as `AudioFileSource` gives them.
        case buffer(SampleBuffer)
        /// Nothing decoded yet: ask again later.
        case pending
        /// The item's end: every buffer was taken.
        case end
    }

    /// Seconds decoded ahead of what was taken, unless the caller says.
    public static let defaultAheadSeconds = 30.0
    /// How long a network read may stall before it is tried again.
    public static let stallTimeoutSeconds = 5
    /// How many times a stalled stream is connected again before the item fails.
    public static let retryLimit = 1

    /// The item, as the caller named it.
    public let location: String
    /// Where in the item the first buffer starts.
    public let startOffset: MediaTime
    private let shared: Shared

    /// Starts reading `location` from `startOffset` on a thread of its own.
    public init(location: String, startingAt startOffset: MediaTime = .zero, aheadSeconds: Double = ReadAheadSource.defaultAheadSeconds,
                stallTimeoutSeconds: Int = ReadAheadSource.stallTimeoutSeconds, retryLimit: Int = ReadAheadSource.retryLimit) {
        self.location = location
        self.startOffset = startOffset
        let shared = Shared(aheadSeconds: aheadSeconds)
        self.shared = shared
        let reader = Thread {
            Reader(location: location, startOffset: startOffset, stallTimeoutSeconds: stallTimeoutSeconds, retryLimit: retryLimit, shared: shared).run()
        }
        reader.name = "longform.source.read-ahead"
        reader.start()
    }

    /// Stops the thread (a network read under way ends at once) and frees what it decoded.
    deinit { shared.close() }

    /// The next buffer, `pending` while none is decoded yet, or `end`. Throws the item's failure
    /// (unreachable, corrupt, stalled past its retries) once the buffers before it are taken.
    public func read() throws(SourceError) -> Read {
        try shared.take()
    }

    /// The item's tags and duration, once it is open; handed over once.
    public func takeMetadata() -> AudioMetadata? {
        shared.takeMetadata()
    }

    /// What the thread and the caller share, under one condition lock.
    private final class Shared: @unchecked Sendable {
        private let condition = NSCondition()
        private let aheadSeconds: Double
        private var buffers: [SampleBuffer] = []
        private var queuedSeconds = 0.0
        private var metadata: AudioMetadata?
        private var isFinished = false
        private var failure: SourceError?
        private var isClosed = false
        /// Cancelled on close: ends the thread's network read under way, an opening included.
        let cancellation = ReadCancellation()

        init(aheadSeconds: Double) {
            self.aheadSeconds = aheadSeconds
        }

        func take() throws(SourceError) -> Read {
            condition.lock()
            defer { condition.unlock() }
            if !buffers.isEmpty {
                let buffer = buffers.removeFirst()
                queuedSeconds -= buffer.outputDuration.seconds
                condition.broadcast()
                return .buffer(buffer)
            }
            if let failure { throw failure }
            return isFinished ? .end : .pending
        }

        func takeMetadata() -> AudioMetadata? {
            condition.lock()
            defer { condition.unlock() }
            defer { metadata = nil }
            return metadata
        }

        /// Waits while `aheadSeconds` are queued; false once closed.
        func waitForRoom() -> Bool {
            condition.lock()
            defer { condition.unlock() }
            while queuedSeconds >= aheadSeconds && !isClosed { condition.wait() }
            return !isClosed
        }

        func append(_ buffer: SampleBuffer) {
            condition.lock()
            buffers.append(buffer)
            queuedSeconds += buffer.outputDuration.seconds
            condition.unlock()
        }

        func opened(_ metadata: AudioMetadata) {
            condition.lock()
            self.metadata = metadata
            condition.unlock()
        }

        func finish(failure: SourceError?) {
            condition.lock()
            isFinished = true
            self.failure = failure
            condition.unlock()
        }

        /// Whether the caller has gone (read under the lock: the thread asks between reads).
        var isClosedNow: Bool {
            condition.lock()
            defer { condition.unlock() }
            return isClosed
        }

        func close() {
            condition.lock()
            isClosed = true
            buffers = []
            condition.broadcast()
            condition.unlock()
            cancellation.cancel()
        }
    }

    /// The thread's side: opens, decodes, connects again after a stall.
    private struct Reader {
        let location: String
        let startOffset: MediaTime
        let stallTimeoutSeconds: Int
        let retryLimit: Int
        let shared: Shared
        private let logger = Logger(label: LogLabel.source)

        /// A new connection to the item, its reads ended by the reader's close.
        func open() throws(SourceError) -> AudioFileSource {
            try AudioFileSource(location: location, networkTimeoutSeconds: stallTimeoutSeconds, cancellation: shared.cancellation)
        }

        func run() {
            do throws(SourceError) {
                var source = try open()
                shared.opened(source.metadata)
                if startOffset > .zero { try source.seek(to: startOffset) }
                var reachedFrame = startOffset.convertScale(Int32(source.sampleRate), method: .roundHalfAwayFromZero).value
                var retries = 0
                while shared.waitForRoom() {
                    let next: SampleBuffer?
                    do throws(SourceError) {
                        next = try source.nextSampleBuffer()
                    } catch where source.inputFailure != nil {
                        // A stall before the first audio ends in "no audio": tried again like any stall.
                        next = nil
                    }
                    if let buffer = next {
                        let end = buffer.presentationTime + buffer.trimDurationAtStart + buffer.outputDuration
                        reachedFrame = end.convertScale(Int32(source.sampleRate), method: .roundHalfAwayFromZero).value
                        shared.append(buffer)
                        continue
                    }
                    guard let stall = source.inputFailure else { return shared.finish(failure: nil) }
                    let seconds = String(format: "%.1f", Double(reachedFrame) / Double(source.sampleRate))
                    guard retries < retryLimit, !shared.isClosedNow else {
                        return shared.finish(failure: SourceError(location: location, kind: .unreachable,
                                                                  detail: "the stream stalled \(seconds) s in (\(stall)); tried again \(retries) time\(retries == 1 ? "" : "s")"))
                    }
                    retries += 1
                    logger.warning("\(location): the stream stalled \(seconds) s in (\(stall)); connecting again")
                    do throws(SourceError) {
                        source = try open()
                        try source.seek(toFrame: reachedFrame)
                    } catch {
                        return shared.finish(failure: SourceError(location: location, kind: .unreachable,
                                                                  detail: "the stream stalled \(seconds) s in (\(stall)), and connecting again failed: \(error.kind.rawValue) (\(error.detail))"))
                    }
                }
            } catch {
                shared.finish(failure: error)
            }
        }
    }
}
