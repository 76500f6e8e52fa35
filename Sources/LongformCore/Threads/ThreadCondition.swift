#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex and a condition variable (pthread's), for threads that wait for work or a deadline.
/// Timed waits run on the monotonic clock, so that a step of the wall clock neither wakes a
/// waiter early nor keeps it asleep. The one owner of its pthread objects, freed in `deinit`.
public final class ThreadCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    /// An unlocked mutex and a condition no thread waits on.
    public init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if canImport(Glibc)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Takes the mutex.
    public func lock() { pthread_mutex_lock(mutex) }

    /// Gives the mutex back.
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Wakes every thread waiting (call with the mutex held, for the change it announces).
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// Waits, with the mutex held, until woken or `nanoseconds` pass; false if they passed. A
    /// waiter may also wake without cause: callers check their condition in a loop.
    @discardableResult
    public func wait(nanoseconds: UInt64) -> Bool {
        #if canImport(Glibc)
        let now = HostClock.rawNow()
        #else
        // Darwin's conditions wait on the wall clock.
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let now = UInt64(wall.tv_sec) * 1_000_000_000 + UInt64(wall.tv_nsec)
        #endif
        let deadline = now + min(nanoseconds, 1 << 62)
        var spec = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex, &spec) != ETIMEDOUT
    }
}
