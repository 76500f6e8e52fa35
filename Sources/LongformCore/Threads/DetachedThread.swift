#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starting a thread of our own (pthread's) for work that must not wait behind a queue: a route's
/// output, the clock exchange. Foundation's `Thread` would do, at the cost of loading Foundation
/// (6 MiB resident) into a speaker that needs nothing else of it.
public enum DetachedThread {
    /// Runs `body` on a new detached thread named `name` (cut to the 15 bytes Linux keeps).
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Context(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, detachedThreadEntry, context)
        precondition(result == 0, "cannot start thread \(name): error \(result)")
        pthread_detach(thread)
    }

    /// The new thread's first call: names it and runs its body (`context`, retained by `start`).
    fileprivate static func run(_ context: UnsafeMutableRawPointer) {
        let context = Unmanaged<Context>.fromOpaque(context).takeRetainedValue()
        setName(context.name)
        context.body()
    }

    /// Whether the calling thread is `thread` (from `current`).
    public static func isCurrent(_ thread: Identity) -> Bool { pthread_equal(pthread_self(), thread.handle) != 0 }

    /// The calling thread.
    public static var current: Identity { Identity(handle: pthread_self()) }

    /// A thread, to compare with the calling one.
    public struct Identity: @unchecked Sendable {
        fileprivate let handle: pthread_t
    }

    /// Names the calling thread (for `ps` and `perf`). glibc's pthread_setname_np is not in
    /// Swift's Glibc module (it needs _GNU_SOURCE): it is looked up, as `AllocatorTuning` does mallopt.
    private static func setName(_ name: String) {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_setname_np") else { return }
        let setName = unsafeBitCast(symbol, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)
        _ = setName(pthread_self(), String(decoding: name.utf8.prefix(15), as: UTF8.self))
        #endif
    }

    private final class Context: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}

/// pthread_create's entry point: a C function, so a top-level one.
private func detachedThreadEntry(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    DetachedThread.run(context!)
    return nil
}
