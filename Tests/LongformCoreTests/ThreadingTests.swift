#if canImport(Glibc)
import Glibc
#endif
import LongformCore
import Synchronization
import Testing

/// The thread and condition the routes run on, without Foundation: a wait ends when woken or at
/// its deadline, a started thread runs its body under its name, and C's formatting comes out as
/// printf's.
@Suite struct ThreadingTests {
    @Test func aWaitEndsAtItsDeadlineWhenNobodyWakesIt() {
        let condition = ThreadCondition()
        condition.lock()
        let start = HostClock.now()
        let wasWoken = condition.wait(nanoseconds: 30_000_000)
        let waited = HostClock.now() - start
        condition.unlock()
        // A wait may end early without cause (POSIX allows it), but then it says it was woken.
        #expect(!wasWoken || waited < 30_000_000)
        if !wasWoken { #expect(waited >= 30_000_000 && waited < 500_000_000, "\(waited) ns") }
    }

    @Test func aBroadcastWakesAThreadWaitingOnAnotherThread() {
        let condition = ThreadCondition()
        let state = Mutex<(isPosted: Bool, wokeAfter: UInt64?)>((false, nil))
        let done = ThreadCondition()
        let start = HostClock.now()
        DetachedThread.start(name: "test.waiter") {
            condition.lock()
            while !state.withLock({ $0.isPosted }) { condition.wait(nanoseconds: 5_000_000_000) }
            condition.unlock()
            done.lock()
            state.withLock { $0.wokeAfter = HostClock.now() - start }
            done.broadcast()
            done.unlock()
        }
        HostClock.sleep(untilNanoseconds: start + 20_000_000)
        condition.lock()
        state.withLock { $0.isPosted = true }
        condition.broadcast()
        condition.unlock()
        done.lock()
        while state.withLock({ $0.wokeAfter }) == nil { done.wait(nanoseconds: 100_000_000) }
        done.unlock()
        // Woken by the broadcast at 20 ms, not by the 5 s timeout.
        let wokeAfter = state.withLock { $0.wokeAfter } ?? 0
        #expect(wokeAfter >= 20_000_000 && wokeAfter < 1_000_000_000, "\(wokeAfter) ns")
    }

    @Test func aStartedThreadRunsUnderItsNameCutToFifteenBytes() {
        let name = Mutex<String?>(nil)
        let isCurrent = Mutex<(inside: Bool, outside: Bool)?>(nil)
        let done = ThreadCondition()
        let caller = DetachedThread.current
        DetachedThread.start(name: "longform.test.thread-name") {
            var buffer = [CChar](repeating: 0, count: 32)
            let file = fopen("/proc/thread-self/comm", "r")
            if let file { _ = fgets(&buffer, 32, file); fclose(file) }
            let own = DetachedThread.current
            done.lock()
            name.withLock { $0 = String(decoding: buffer.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
            isCurrent.withLock { $0 = (DetachedThread.isCurrent(own), DetachedThread.isCurrent(caller)) }
            done.broadcast()
            done.unlock()
        }
        done.lock()
        while isCurrent.withLock({ $0 }) == nil { done.wait(nanoseconds: 100_000_000) }
        done.unlock()
        #expect(name.withLock { $0 } == "longform.test.t")
        #expect(isCurrent.withLock { $0?.inside } == true && isCurrent.withLock { $0?.outside } == false)
        #expect(DetachedThread.isCurrent(caller))
    }

    @Test func cFormatFollowsPrintf() {
        #expect(String(cFormat: "%+.1f ppm", 12.345) == "+12.3 ppm")
        #expect(String(cFormat: "%+.1f", -0.04) == "-0.0")
        #expect(String(cFormat: "%02x%02x", UInt8(10), UInt8(255)) == "0aff")
        #expect(String(cFormat: "%.2f s and %d", 1.25, 42) == "1.25 s and 42")
        // Longer than the first buffer: printed again into one that fits.
        let long = String(cFormat: "%300d|", 7)
        #expect(long.count == 301 && long.hasSuffix("7|") && long.hasPrefix("   "))
        #expect(String(cFormat: "ü %d", 3) == "ü 3")
    }
}
