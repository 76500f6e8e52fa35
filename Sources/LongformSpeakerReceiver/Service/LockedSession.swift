import Synchronization

/// The one `SpeakerSession` of a speaker, shared by its connection, its clock requests and its
/// output thread, each holding the lock only for the session's own quick work.
final class LockedSession: Sendable {
    private let mutex: Mutex<SpeakerSession>

    init(_ session: SpeakerSession) { mutex = Mutex(session) }

    func withLock<T>(_ body: (inout SpeakerSession) -> T) -> T { mutex.withLock { body(&$0) } }
}
