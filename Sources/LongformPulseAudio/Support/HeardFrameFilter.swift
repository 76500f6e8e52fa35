import LongformCore

/// Smooths a device's reports of which frame is heard when into a line that the route's clock
/// reads.
///
/// A report is late, never early: PulseAudio finds the frame heard in its I/O thread and stamps the
/// time once the answer is back in its main thread, tens of microseconds later, and now and then
/// milliseconds on a loaded host. So the truth is the reports' lower edge, not their mean. The line
/// is a least-squares fit to the lower half of the last `window` of reports (the half chosen about
/// the fit before, until it settles), so that it follows the device's own rate (null sinks ran 7
/// to 50 ppm fast against the host clock) and no late report moves it. Ten seconds, not a minute:
/// a null sink's rate moved by 20 to 45 ppm for tens of seconds at a time as streams started,
/// flushed or paused on it, and three rooms on one sink, fitted over a minute, played up to 370 µs
/// apart after one of them joined (its young fit had the new rate, the others' a mix); over ten
/// seconds every room's line rests on the same recent reports. It lies a few microseconds above
/// the edge itself (at about the lateness's lower quartile), alike for streams that read their
/// reports as often. A delay-locked loop did this before: every late report moved its line, so a
/// stereo pair on one sink wandered ±40 µs apart, and one report 0.8 ms late in the loop's quick
/// first 20 s moved them 0.8 ms apart (commit 49ac25c).
///
/// A report more than 5 ms late or 0.3 ms early is left out. On a loaded host (a speaker being
/// filled at 90× real time) single reports came that late, and a line started again at one of them
/// moved the speaker by up to 9 ms; just after a flush at a stream's start, one came 1.6 ms early
/// (with the line started again at any single early report, one ten-minute run held a pair 0.9 ms
/// apart throughout; not traced, and not seen in the run after it took three). The line starts again
/// only where `confirmingReports` such reports in a row agree with one another (the device did
/// move: an underrun, or heard earlier). A smaller move later is followed as the reports before it
/// leave the window, the line tilting by up to the move meanwhile (a run of late reports on a
/// loaded host must not move it).
///
/// Until a rate is fitted, the device may be off its nominal rate by as much as
/// `maximumRateDeviation` (a speaker's clock on another crystal), and a report may be early by that
/// much more before it counts as a move (late, 5 ms is already far more than the first seconds need).
/// Meanwhile the line runs at the nominal rate, or, once the reports span `evidentSeedSpan`, at the
/// slope from the oldest report to the newest (or to the one before, if that is nearer the nominal
/// rate or the newest is alone in its slot, where a late one lies; see `seedSlope`) if that is
/// `evidentRateDeviation` off it: about a rate that far off, the lower half lies at one end of the
/// reports, and the line through it misses the newest by more each second. A slot keeps its lowest
/// report, the stream's first slot too (its first report came up to 190 µs above the next).
///
/// The rate it gives (`point(near:)`) is the nominal one until its fit is sure: a stream's first
/// reports sit high (on a null sink, 80 µs above the line at first, 40 µs at 2 s, on it from 3 s),
/// and a rate fitted through them was 25 ppm off for 10 s, which a speaker placing a write 2 s ahead
/// by it heard as 50 µs, each room its own way (at the nominal rate, all rooms on one host err
/// alike). So the fitted rate is given once the lower half of the reports spans `trustedRateSpan`
/// (4 s: the lower half of a full window's reports spans about half of it or more), or before,
/// once the lines of two slots in a row (fitted, or an evident seed's) are more than
/// `evidentRateDeviation` off the nominal one on the same side (a device that far off misplaces a
/// write 2 s ahead by 200 µs at the nominal rate, and its fit is nearer; at 50 ppm a young fit of a
/// device on the host's clock now and then passed it, and two of twelve starts of three such rooms
/// went over 100 µs). The rate
/// given is always the fit's as a slot of reports closed: the newest slot's report may yet give way
/// to a lower one, and one 326 µs late alone in it tilted a young fit to −180 ppm until the next
/// report came (`closedSlotRates`).
struct HeardFrameFilter: Sendable {
    /// A report later than this past the line is left out of it (ns).
    static let outlierDistance: Double = 5_000_000
    /// A report earlier than this before the line is left out of it too (ns): far beyond the line's error.
    static let earlierMoveDistance: Double = 300_000
    /// The most two outlying reports in a row may disagree (ns, at the nominal rate) and still
    /// count towards a new line.
    static let confirmingDistance: Double = 1_000_000
    /// Outlying reports in a row, each within `confirmingDistance` of the first's line at the
    /// nominal rate, that start the line again at the last of them.
    static let confirmingReports = 3
    /// Reports older than this are forgotten (ns), as long as `minimumReports` stay: long enough
    /// that its lower half fits a rate to a few ppm, short enough to follow one that moves (see
    /// the type's notes).
    static let window: Double = 10_000_000_000
    /// The fewest reports kept, however old: a route that reads a report a second keeps 20 s.
    static let minimumReports = 20
    /// The most reports kept: at least half a second apart, the window holds at most 21.
    static let maximumReports = 128
    /// Of the reports in one slot of this long (seconds), the lowest is kept: a route writing in
    /// short pieces reads one after each, and would fill the reports with a few seconds' worth.
    /// Slots, not spacing: of two reports closer than this the lower was kept, and on a device
    /// faster than its line each report was the lower, so one report slid on and no rate was fitted.
    static let minimumReportSpacing = 0.5
    /// The rate is fitted only when the lower half of the reports spans this much (seconds);
    /// until then it is the previous line's, at first the nominal one.
    static let minimumRateSpan = 2.0
    /// Before a rate is fitted, the line takes the slope from the oldest report to the newest (see
    /// `seedSlope`) once they span this much (seconds) and it is `evidentRateDeviation` off the
    /// nominal one: about the nominal rate, the lower half of a device 190 ppm off lay at the
    /// oldest end, and the line through it was 480 µs early at the newest report by the time a
    /// rate was fitted.
    static let evidentSeedSpan = 0.5
    /// The most the rate may differ from the nominal one (a device clock is off by tens of ppm).
    static let maximumRateDeviation = 0.001
    /// The fitted rate is given once the lower half of the reports spans this long (seconds)...
    static let trustedRateSpan = 4.0
    /// ...or before, once the fits of two slots in a row (as each closed) are this far off the nominal one.
    static let evidentRateDeviation = 100e-6
    /// The rate is worth remembering for the device's next stream (`settledRate`) once no report
    /// the fit rests on is from the stream's first this many seconds: a null sink's rate trusted
    /// at 8 s, tilted by them, was 25 to 45 ppm under the one fitted 10 s later.
    static let settledDelay = 10.0

    private let nominalNanosecondsPerFrame: Double
    private let minimumRateFrames: Int64
    private let minimumSpacingFrames: Int64
    private let trustedRateFrames: Int64
    private let evidentSeedFrames: Int64
    private let settledDelayFrames: Int64
    /// The stream's first report's frame (nil before it).
    private var streamFirstFrame: Int64?
    /// How far apart the lower half of the reports lay in the last fit (frames).
    private var lowerHalfSpan = 0.0
    /// Whether the line's rate has been fitted, rather than taken as the nominal one.
    private var isRateFitted = false
    /// Whether the lower half of the reports has spanned `trustedRateSpan` since the stream began.
    private var isRateTrusted = false
    /// The reports the line is fitted to, oldest first.
    private var reports: [(frame: Int64, time: Double)] = []
    /// The line, through the newest report's frame.
    private var line: (frame: Int64, time: Double, nanosecondsPerFrame: Double)?
    /// The rate given until the fit is trusted: the nominal one, or the one given when the stream
    /// was opened again (`streamRestarted`).
    private var untrustedRate = 1.0
    /// The line's rate when its stream was opened again, for the new stream's line.
    private var restartedNanosecondsPerFrame: Double?
    /// How many reports the newest slot has had: the lowest of two or more is rarely a late one.
    private var newestSlotReportCount = 0
    /// The first of the outlying reports in a row, how many there have been, and the last one's frame.
    private var outliers: (frame: Int64, time: Double, count: Int, lastFrame: Int64)?
    /// The line's rate (frames per host-clock second over the nominal rate) as each of the last
    /// two slots of reports closed, nominal until one is fitted: the rates `point(near:)` gives.
    private var closedSlotRates: (last: Double, previous: Double) = (1, 1)

    /// A filter for a device at `sampleRate`; one whose rate is remembered from an earlier run
    /// (`rememberedRate`, see `DeviceRateMemory`) starts as a stream opened again after one that
    /// fitted that rate: its line runs at it and it is the rate given until the new fit is trusted.
    init(sampleRate: Int, rememberedRate: Double? = nil) {
        nominalNanosecondsPerFrame = 1e9 / Double(sampleRate)
        minimumRateFrames = Int64(Self.minimumRateSpan * Double(sampleRate))
        minimumSpacingFrames = Int64(Self.minimumReportSpacing * Double(sampleRate))
        trustedRateFrames = Int64(Self.trustedRateSpan * Double(sampleRate))
        evidentSeedFrames = Int64(Self.evidentSeedSpan * Double(sampleRate))
        settledDelayFrames = Int64(Self.settledDelay * Double(sampleRate))
        if let rememberedRate, rememberedRate.isFinite, abs(rememberedRate - 1) <= Self.maximumRateDeviation {
            isRateFitted = true
            untrustedRate = rememberedRate
            restartedNanosecondsPerFrame = nominalNanosecondsPerFrame / rememberedRate
            closedSlotRates = (rememberedRate, rememberedRate)
        }
    }

    /// The rate fitted as the last slot of reports closed, once the fit is trusted and rests on
    /// reports past the stream's first `settledDelay` seconds only; nil before: what is worth
    /// remembering for the device's next stream.
    var settledRate: Double? {
        // (A lower half spanning `trustedRateSpan` is a trusted fit.)
        guard lowerHalfSpan >= Double(trustedRateFrames), let first = streamFirstFrame, let oldest = reports.first,
              oldest.frame - first >= settledDelayFrames else { return nil }
        return closedSlotRates.last
    }

    /// The line's frame heard nearest `hostTime`, the host time the line gives it and the rate
    /// given (the device's frames per host-clock second over the nominal rate, as the last slot of
    /// reports closed; see the type's notes), or nil before the first report: what a clock set now
    /// reads, rather than the report's old point.
    func point(near hostTime: UInt64) -> (frame: Int64, hostTime: UInt64, rate: Double)? {
        guard let line else { return nil }
        let frame = line.frame + Int64(((Double(hostTime) - line.time) / line.nanosecondsPerFrame).rounded())
        let (last, previous) = closedSlotRates
        let isEvident = abs(last - 1) > Self.evidentRateDeviation && abs(previous - 1) > Self.evidentRateDeviation && (last > 1) == (previous > 1)
        return (frame, UInt64(max(0, (line.time + Double(frame - line.frame) * line.nanosecondsPerFrame).rounded())),
                isRateTrusted || isEvident ? last : untrustedRate)
    }

    /// The device's stream was opened again: its next report starts a new line at the rate found
    /// so far (the device's rate did not change with the stream, and a new fit would give the
    /// nominal one for seconds, which moved a room reopened among others 7 frames in 3 s), and
    /// the old reports are forgotten (taken into the fit, a move of a few milliseconds would tilt
    /// it for as long as they stay in the window).
    /// Until that report there is no line (`point(near:)` is nil). The rate given is the one given
    /// now until the new stream's fit is trusted (a new stream's first reports sit high, and its
    /// young fit drifted a reopened room 4 frames from the others in 4 s), or the old stream's fit
    /// if it had one but did not give it yet: the device's rate so far, if tilted by that stream's
    /// own first reports. (The nominal rate again, a room reopened 3 s in on a sink 60 ppm fast
    /// drifted 8 frames from the others, which gave the sink's rate from 4 s on.)
    mutating func streamRestarted() {
        untrustedRate = isRateFitted ? closedSlotRates.last : point(near: 0)?.rate ?? untrustedRate
        isRateTrusted = false
        streamFirstFrame = nil
        restartedNanosecondsPerFrame = line?.nanosecondsPerFrame ?? restartedNanosecondsPerFrame
        line = nil
        reports = []
        outliers = nil
    }

    /// Takes the report "`frame` is heard at `hostTime`" and returns the host time the line gives
    /// that frame.
    mutating func add(frame: Int64, heardAt hostTime: UInt64) -> UInt64 {
        let measured = Double(hostTime)
        guard let current = line, let newest = reports.last, frame >= newest.frame else {
            return startLine(at: frame, heardAt: measured)
        }
        let predicted = current.time + Double(frame - current.frame) * current.nanosecondsPerFrame
        // The same report again (no fresh one since): the line as it is.
        if frame == newest.frame { return UInt64(max(0, predicted.rounded())) }
        // Reports are never early: one this far before the line is the device heard earlier now,
        // once the next agree (fitted on, the lower half would mix the reports before and after and
        // tilt the line by as much as the move for seconds), or else a bogus one (a report
        // just after a flush at a stream's start came 1.6 ms early), left out.
        // Before a rate is fitted, the line may be off by as much as a device can be off its rate.
        let rateSlack = isRateFitted ? 0 : Self.maximumRateDeviation * Double(frame - (reports.first?.frame ?? frame)) * nominalNanosecondsPerFrame
        guard measured - predicted >= -(Self.earlierMoveDistance + rateSlack) && measured - predicted <= Self.outlierDistance else {
            // Held apart: a report that agrees with the outliers before it counts towards a new line
            // (the same one read again does not count twice).
            if let first = outliers, frame == first.lastFrame { return UInt64(max(0, predicted.rounded())) }
            if let first = outliers, frame > first.lastFrame, abs(measured - (first.time + Double(frame - first.frame) * nominalNanosecondsPerFrame)) <= Self.confirmingDistance {
                outliers = (first.frame, first.time, first.count + 1, frame)
            } else {
                outliers = (frame, measured, 1, frame)
            }
            if let confirmed = outliers, confirmed.count >= Self.confirmingReports {
                return startLine(at: frame, heardAt: measured)
            }
            return UInt64(max(0, predicted.rounded()))
        }
        outliers = nil
        let isInNewestSlot = frame / minimumSpacingFrames == newest.frame / minimumSpacingFrames
        if !isInNewestSlot {
            // The newest report's slot closes: the line as it stands is that slot's fit (before a
            // fit, the nominal rate or an evident seed's).
            closedSlotRates = (nominalNanosecondsPerFrame / current.nanosecondsPerFrame, closedSlotRates.last)
        }
        newestSlotReportCount = isInNewestSlot ? newestSlotReportCount + 1 : 1
        if isInNewestSlot {
            // The newest report lies on the line's frame: its distance above the line is its time
            // less the line's. (A stream's first report, alone, gives way too: it came up to 190 µs
            // above the next ones, and as the oldest report it tilted the young line for seconds.)
            if measured - predicted < newest.time - current.time {
                reports[reports.count - 1] = (frame, measured)
            } else if isRateFitted || newestSlotReportCount != 2 {
                return UInt64(max(0, predicted.rounded()))
            }
            // (Or the newest report is now its slot's lowest of two: fitted again, a seed may take it.)
        } else {
            reports.append((frame, measured))
        }
        let tooOld = min(reports.prefix { measured - $0.time > Self.window }.count, max(0, reports.count - Self.minimumReports))
        reports.removeFirst(max(tooOld, reports.count - Self.maximumReports))
        let fitted = Self.fit(reports, nanosecondsPerFrame: current.nanosecondsPerFrame, isRateFitted: isRateFitted, nominal: nominalNanosecondsPerFrame,
                              minimumRateFrames: minimumRateFrames, evidentSeedFrames: evidentSeedFrames, isNewestConfirmed: newestSlotReportCount >= 2)
        if fitted.isRateFitted { isRateFitted = true }
        if fitted.lowerHalfSpan >= Double(trustedRateFrames) { isRateTrusted = true }
        lowerHalfSpan = fitted.lowerHalfSpan
        line = (fitted.frame, fitted.time, fitted.nanosecondsPerFrame)
        return UInt64(max(0, (fitted.time + Double(frame - fitted.frame) * fitted.nanosecondsPerFrame).rounded()))
    }

    /// The line through the lower half of `reports`, through the newest report's frame: fitted to
    /// the lower half about a rate, starting from `nanosecondsPerFrame`, then again about the rate
    /// found until it settles (which half lies lowest depends on the rate: after the device moved,
    /// a line tilted by the move chose a mix of old and new reports again and again). The rate is
    /// kept while the lower half spans too few frames; until a rate was ever fitted (`wasFitted`),
    /// the rounds start from an evident seed (see `evidentSeedSpan`) and may start again from the
    /// slope of the oldest report to the newest.
    private static func fit(_ reports: [(frame: Int64, time: Double)], nanosecondsPerFrame: Double, isRateFitted wasFitted: Bool, nominal: Double,
                            minimumRateFrames: Int64, evidentSeedFrames: Int64, isNewestConfirmed: Bool)
        -> (frame: Int64, time: Double, nanosecondsPerFrame: Double, isRateFitted: Bool, lowerHalfSpan: Double) {
        let newest = reports[reports.count - 1]
        // Relative to the newest report, so that the sums keep their precision.
        let points = reports.map { (x: Double($0.frame - newest.frame), y: $0.time - newest.time) }
        var slope = nanosecondsPerFrame, intercept = 0.0, isRateFitted = false, isSeeded = wasFitted
        let limit = nominal * maximumRateDeviation
        if !wasFitted, let seed = seedSlope(points, minimumSpan: Double(evidentSeedFrames), nominal: nominal, isNewestConfirmed: isNewestConfirmed) {
            // Far off the nominal rate, the seed is nearer the device's than the nominal rate is
            // (see `evidentSeedSpan`); near it, the nominal rate errs alike for every stream on the device.
            slope = abs(seed - nominal) > nominal * evidentRateDeviation ? min(max(seed, nominal - limit), nominal + limit) : nominal
        }
        for _ in 0..<8 {
            let round = LowerEdgeFit.round(points, about: slope, keeping: (points.count + 1) / 2, minimumSpan: Double(minimumRateFrames))
            if round.slope == nil, !isSeeded, let seed = seedSlope(points, minimumSpan: Double(minimumRateFrames), nominal: nominal, isNewestConfirmed: isNewestConfirmed) {
                // Before any rate is fitted, about one far off the lower half lies at one end of the
                // reports and spans too little to fit (a device 200 ppm off went unfitted for 35 s):
                // the slope from the oldest report to the newest starts the rounds again. (Later,
                // the rate fitted before is a better start than two reports, one of which may be late.)
                isSeeded = true
                slope = min(max(seed, nominal - limit), nominal + limit)
                continue
            }
            guard let fitted = round.slope else {
                intercept = round.meanY - slope * round.meanX
                break
            }
            let previous = slope
            slope = min(max(fitted, nominal - limit), nominal + limit)
            isRateFitted = true
            intercept = round.meanY - slope * round.meanX
            if abs(slope - previous) < nominal * 1e-9 { break }
        }
        // How far apart the reports of the lower half about the rate found lie (frames).
        let lowerHalf = LowerEdgeFit.lowest(points, about: slope, count: (points.count + 1) / 2).map(\.x)
        return (newest.frame, newest.time + intercept, slope, isRateFitted, (lowerHalf.max() ?? 0) - (lowerHalf.min() ?? 0))
    }

    /// Of the slopes from the oldest of `points` to the one before the newest and to the newest
    /// (if `isNewestConfirmed`, the lowest of two or more reports in its slot), those at least
    /// `minimumSpan` apart in x, the one nearer `nominal`; nil when none spans that. A report alone
    /// in its slot may be late: one 410 µs late set a seed of −183 ppm for a device on the host's
    /// clock, and one 3 ms late a seed of +1,000 ppm; the line through each moved 170 and 660 µs
    /// until the slot's next report came. (The others are their slots' lowest reports.)
    private static func seedSlope(_ points: [(x: Double, y: Double)], minimumSpan: Double, nominal: Double, isNewestConfirmed: Bool) -> Double? {
        guard let oldest = points.first else { return nil }
        return points.dropFirst().dropLast(isNewestConfirmed ? 0 : 1).suffix(isNewestConfirmed ? 2 : 1)
            .filter { $0.x - oldest.x >= minimumSpan }.map { ($0.y - oldest.y) / ($0.x - oldest.x) }
            .min { abs($0 - nominal) < abs($1 - nominal) }
    }

    /// Starts the line again at a report, taken as it is (at the rate of the line before, or the
    /// nominal one), and returns its time.
    private mutating func startLine(at frame: Int64, heardAt time: Double) -> UInt64 {
        line = (frame, time, line?.nanosecondsPerFrame ?? restartedNanosecondsPerFrame ?? nominalNanosecondsPerFrame)
        if streamFirstFrame == nil { streamFirstFrame = frame }
        lowerHalfSpan = 0
        reports = [(frame, time)]
        newestSlotReportCount = 1
        outliers = nil
        return UInt64(max(0, time.rounded()))
    }
}
