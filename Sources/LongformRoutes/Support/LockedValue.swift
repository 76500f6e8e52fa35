import Synchronization

/// A value behind a mutex, for the few fields a route's thread and its callers share.
package final class LockedValue<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    package init(_ value: Value) { storage = Mutex(value) }
    package var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
    /// Reads and changes the value in one step.
    package func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result { storage.withLock { body(&$0) } }
}
