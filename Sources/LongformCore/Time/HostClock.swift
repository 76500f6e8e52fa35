#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The host clock: CLOCK_MONOTONIC in nanoseconds, the time base every route clock is read against.
///
/// Every reading of time that audio is placed by goes through it, the kernel's and PulseAudio's
/// wall-clock stamps too (`hostTime(ofRealTime:)`): so that a test can run one process's clock at
/// another rate (`run(partsPerMillionFast:)`), as a speaker on another crystal would, although every
/// process on one machine shares one clock. Unskewed, it reads CLOCK_MONOTONIC as it is.
public enum HostClock {
    /// The skew's origin (raw nanoseconds) and its rate less 1 (a Double's bits): from the origin
    /// on, readings move 1 + rate times as fast as the system's. Zero bits: no skew.
    private static let skewOrigin = Atomic<UInt64>(0)
    private static let skewRateBits = Atomic<UInt64>(0)

    /// Nanoseconds on the monotonic clock now (skewed, if a skew is set).
    public static func now() -> UInt64 {
        skewed(rawNow())
    }

    /// Runs this process's host clock `partsPerMillion` faster than the system's (slower, if
    /// negative) from now on, continuous with its readings so far: a test's seam for a device on a
    /// crystal of its own. Set before any thread reads the clock; at most ±1,000 ppm.
    public static func run(partsPerMillionFast partsPerMillion: Double) {
        let rate = min(max(partsPerMillion, -1_000), 1_000) / 1e6
        skewOrigin.store(rawNow(), ordering: .relaxed)
        skewRateBits.store(rate.bitPattern, ordering: .releasing)
    }

    /// How many parts per million faster than the system's this process's host clock runs (0: as fast).
    public static var partsPerMillionFast: Double {
        Double(bitPattern: skewRateBits.load(ordering: .acquiring)) * 1e6
    }

    /// The host time at which the wall clock (CLOCK_REALTIME, the only clock the kernel stamps a
    /// datagram with and PulseAudio a timing report with) read `realTime` ns: now less how long ago
    /// that was. A stamp from the future or more than 10 s old (the wall clock stepped) reads as now.
    public static func hostTime(ofRealTime realTime: Int64) -> UInt64 {
        let (raw, real) = rawAndRealTimeNow()
        let age = real - realTime
        guard age > 0, age < 10_000_000_000 else { return skewed(raw) }
        return skewed(raw - UInt64(age))
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
        let raw = unskewed(deadline)
        var spec = timespec(tv_sec: Int(raw / 1_000_000_000), tv_nsec: Int(raw % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil) == EINTR {}
    }

    /// CLOCK_MONOTONIC itself, in nanoseconds (also what `ThreadCondition`'s timed waits run on).
    static func rawNow() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// A raw reading as this process's host clock reads it.
    private static func skewed(_ raw: UInt64) -> UInt64 {
        let bits = skewRateBits.load(ordering: .acquiring)
        guard bits != 0 else { return raw }
        return ClockSkew(origin: skewOrigin.load(ordering: .relaxed), rate: Double(bitPattern: bits)).reading(ofRaw: raw)
    }

    /// The raw reading at which this process's host clock reads `hostTime`.
    private static func unskewed(_ hostTime: UInt64) -> UInt64 {
        let bits = skewRateBits.load(ordering: .acquiring)
        guard bits != 0 else { return hostTime }
        return ClockSkew(origin: skewOrigin.load(ordering: .relaxed), rate: Double(bitPattern: bits)).raw(ofReading: hostTime)
    }

    /// The raw monotonic clock and the wall clock at one instant. The monotonic clock is read
    /// between two readings of the wall clock, the closest of three tries: a thread preempted
    /// between two single readings would date a stamp that much too early, and so make a
    /// datagram's round trip look shorter, which makes it the very sample a clock estimate prefers.
    private static func rawAndRealTimeNow() -> (raw: UInt64, real: Int64) {
        var best = (raw: UInt64(0), real: Int64(0), bracket: Int64.max)
        for _ in 0..<3 {
            let before = realTimeNow()
            let raw = rawNow()
            let after = realTimeNow()
            if after - before < best.bracket { best = (raw, before + (after - before) / 2, after - before) }
            if best.bracket < 2_000 { break }
        }
        return (best.raw, best.real)
    }

    /// The wall clock (CLOCK_REALTIME) in nanoseconds.
    private static func realTimeNow() -> Int64 {
        var real = timespec()
        clock_gettime(CLOCK_REALTIME, &real)
        return Int64(real.tv_sec) * 1_000_000_000 + Int64(real.tv_nsec)
    }
}
