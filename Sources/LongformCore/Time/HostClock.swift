#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The host clock: CLOCK_MONOTONIC in nanoseconds, the time base every route clock is read against.
public enum HostClock {
    /// Nanoseconds on the monotonic clock now.
    public static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// The host time `nanoseconds` as a media time, for `setRate(_:time:atHostTime:)`.
    public static func time(nanoseconds: UInt64) -> MediaTime {
        MediaTime(value: Int64(nanoseconds), timescale: 1_000_000_000)
    }

    /// Nanoseconds of a numeric media time on the host clock (clamped at zero).
    public static func nanoseconds(of time: MediaTime) -> UInt64 {
        let converted = time.convertScale(1_000_000_000, method: .roundHalfAwayFromZero)
        return converted.isNumeric ? UInt64(max(converted.value, 0)) : 0
    }

    /// Sleeps until the host clock reads `deadline` nanoseconds (absolute, so drift does not accumulate).
    public static func sleep(untilNanoseconds deadline: UInt64) {
        var spec = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil) == EINTR {}
    }
}
