import Synchronization

/// Actions to run at exact output frames: what a `FrameActionRoute` keeps, and its thread (or
/// its `OfflineRenderDriver`) runs as the output reaches each frame. Actions at one frame run in
/// the order they were added. Thread-safe.
public final class FrameActionSchedule: Sendable {
    private struct Scheduled {
        var frame: Int64
        var action: @Sendable () -> Void
    }

    private let actions = Mutex<[Scheduled]>([])

    /// No actions.
    public init() {}

    /// Runs `action` when the output reaches `frame`, after the actions already set for that frame.
    public func add(atFrame frame: Int64, _ action: @escaping @Sendable () -> Void) {
        actions.withLock { actions in
            let index = actions.firstIndex { $0.frame > frame } ?? actions.endIndex
            actions.insert(Scheduled(frame: frame, action: action), at: index)
        }
    }

    /// Forgets the actions not yet run.
    public func removeAll() { actions.withLock { $0.removeAll() } }

    /// The frame of the next action, if any.
    public var nextFrame: Int64? { actions.withLock { $0.first?.frame } }

    /// Runs the actions due at `frame` one by one, outside the lock (an action may add or remove
    /// actions); returns the frame of the next one.
    public func runDue(atFrame frame: Int64) -> Int64? {
        while true {
            let due = actions.withLock { actions -> (@Sendable () -> Void)? in
                guard let first = actions.first, first.frame <= frame else { return nil }
                return actions.removeFirst().action
            }
            guard let due else { return nextFrame }
            due()
        }
    }
}
