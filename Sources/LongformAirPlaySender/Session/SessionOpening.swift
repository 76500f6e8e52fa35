import Synchronization

/// One attempt to open a session, which the link's `stop` can end: the connection in flight is
/// closed, so that the request waiting on it fails at once and the receiver, its connection gone,
/// ends the half-made session (else it would refuse the next start's ANNOUNCE as busy while the
/// attempt ran on, up to one answer timeout a request).
final class SessionOpening: Sendable {
    private let state = Mutex<(isCancelled: Bool, connection: RTSPConnection?)>((false, nil))

    /// Whether `cancel` was called.
    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Ends the attempt: closes its connection, now or when it is made.
    func cancel() {
        let connection = state.withLock { state in
            state.isCancelled = true
            return state.connection
        }
        connection?.close()
    }

    /// Makes `connection` the attempt's; false (and it is closed) when the attempt was cancelled.
    func adopt(_ connection: RTSPConnection) -> Bool {
        let isCancelled = state.withLock { state in
            if !state.isCancelled { state.connection = connection }
            return state.isCancelled
        }
        if isCancelled { connection.close() }
        return !isCancelled
    }
}
