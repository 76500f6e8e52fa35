import LongformCore
import Synchronization

/// When FFmpeg's blocking network I/O gives up, asked by FFmpeg's interrupt callback while it
/// waits: once cancelled (from any thread), or when one call (an open, a packet's read, a seek)
/// has waited `stallNanoseconds`. The second catches a server that trickles a byte every few
/// seconds, which never trips `rw_timeout` (each socket read returns something) yet delivers no audio.
final class FFmpegInterrupt: Sendable {
    /// How long one call may wait.
    let stallNanoseconds: UInt64
    /// Cancels every call, from any thread.
    let cancellation: ReadCancellation
    /// HostClock time after which the call under way is interrupted; set as each call starts.
    private let deadline = Atomic<UInt64>(.max)

    /// An interrupt that trips when a call has waited `stallSeconds`, or once `cancellation` is cancelled.
    init(stallSeconds: Int, cancellation: ReadCancellation) {
        stallNanoseconds = UInt64(max(stallSeconds, 1)) * 1_000_000_000
        self.cancellation = cancellation
    }

    /// A call starts: it may wait `stallNanoseconds`.
    func noteProgress() { deadline.store(HostClock.now() &+ stallNanoseconds, ordering: .relaxed) }

    /// Why FFmpeg should stop waiting now, or nil to wait on.
    var reason: String? {
        if cancellation.isCancelled { return "cancelled" }
        if HostClock.now() > deadline.load(ordering: .relaxed) { return "waited \(stallNanoseconds / 1_000_000_000) s for data" }
        return nil
    }

    /// The callback FFmpeg calls with `opaque` (this object, unretained).
    static let callback: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { opaque in
        guard let opaque else { return 0 }
        return Unmanaged<FFmpegInterrupt>.fromOpaque(opaque).takeUnretainedValue().reason == nil ? 0 : 1
    }
}
