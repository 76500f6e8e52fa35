import Synchronization

/// What a monitored route played, frame by frame: a rendering that starts at a frame seen before
/// (a rewind) replaces everything from that frame on, as it does at the route's output.
public final class HeardAudio: Sendable {
    /// Interleaved channels per frame.
    public let channelCount: Int
    private let storage = Mutex<[Float]>([])

    /// An empty recording of `channelCount` channels.
    public init(channelCount: Int) { self.channelCount = channelCount }

    /// Records `samples` as the frames from `firstFrame` on; a monitor's callback.
    public func record(firstFrame: Int64, samples: UnsafeBufferPointer<Float>) {
        storage.withLock { heard in
            let start = Int(firstFrame) * channelCount
            if start < heard.count { heard.removeSubrange(start...) }
            // A gap (never expected of a route) stays audible as silence rather than closing up.
            if start > heard.count { heard.append(contentsOf: repeatElement(0, count: start - heard.count)) }
            heard.append(contentsOf: samples)
        }
    }

    /// The interleaved samples heard so far.
    public var samples: [Float] { storage.withLock { $0 } }

    /// Frames heard so far.
    public var frameCount: Int { storage.withLock { $0.count } / channelCount }
}
