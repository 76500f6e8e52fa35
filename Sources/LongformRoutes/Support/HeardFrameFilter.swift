/// Smooths a device's reports of which frame is heard when. PulseAudio's timing, read after each
/// write, is off by a few hundred microseconds from one report to the next, while the device
/// plays at a steady rate; a clock set from each report moves by that much, and a network
/// speaker following it resamples to chase the noise (the stereo pair drifted apart by up to
/// 0.5 ms). The filter keeps a line through the reports and corrects its phase and its rate a
/// little at each one, a delay-locked loop as JACK and PipeWire use for their device clocks.
///
/// A report more than a millisecond off the line counts as a millisecond, and one more than 5 ms
/// off not at all: on a loaded host (a speaker being filled at 90× real time) single reports came
/// milliseconds late, and a line started again at one of them moved the speaker by up to 9 ms,
/// for the 40 s the loop took to settle. The line starts again only where `confirmingReports`
/// reports in a row more than 5 ms off agree with one another (the device did move: an
/// underrun). (Starting it again at three agreeing reports 1.5 ms off, in a first version, moved
/// a speaker by that much in the middle of a run: the loop follows such a shift more gently.)
struct HeardFrameFilter: Sendable {
    /// The most a report's distance from the line counts for in the loop (ns).
    static let largestError: Double = 1_000_000
    /// A report further than this from the line is not fed to the loop (ns).
    static let outlierDistance: Double = 5_000_000
    /// Outlying reports in a row, each within `largestError` of the first's line at the nominal
    /// rate, that start the line again at the last of them.
    static let confirmingReports = 3
    /// The loop's bandwidth (Hz): how quickly the line follows the reports. Wide for its first
    /// `acquisitionSeconds` (a stream's first reports are off by milliseconds, and a narrow loop
    /// would take minutes to leave them behind), narrow after.
    static let bandwidth = 0.01
    static let acquisitionBandwidth = 0.1
    static let acquisitionSeconds = 20.0
    /// The most the rate may differ from the nominal one (a device clock is off by tens of ppm).
    static let maximumRateDeviation = 0.001

    private let nominalNanosecondsPerFrame: Double
    private var line: (frame: Int64, time: Double, nanosecondsPerFrame: Double)?
    /// Nanoseconds of reports since the line started.
    private var lineAge: Double = 0
    /// The first of the outlying reports in a row, and how many there have been.
    private var outliers: (frame: Int64, time: Double, count: Int)?

    /// A filter for a device at `sampleRate`.
    init(sampleRate: Int) {
        nominalNanosecondsPerFrame = 1e9 / Double(sampleRate)
    }

    /// The line's frame heard nearest `hostTime` and the host time the line gives it, or nil
    /// before the first report: what a clock set now reads, rather than the report's old point.
    func point(near hostTime: UInt64) -> (frame: Int64, hostTime: UInt64)? {
        guard let line else { return nil }
        let frame = line.frame + Int64(((Double(hostTime) - line.time) / line.nanosecondsPerFrame).rounded())
        return (frame, UInt64(max(0, (line.time + Double(frame - line.frame) * line.nanosecondsPerFrame).rounded())))
    }

    /// Takes the report "`frame` is heard at `hostTime`" and returns the host time the line gives
    /// that frame.
    mutating func add(frame: Int64, heardAt hostTime: UInt64) -> UInt64 {
        let measured = Double(hostTime)
        // The same report again (no fresh one since): the line as it is.
        if let current = line, frame == current.frame { return UInt64(max(0, current.time.rounded())) }
        guard let current = line, frame > current.frame else {
            return startLine(at: frame, heardAt: hostTime, nanosecondsPerFrame: line?.nanosecondsPerFrame ?? nominalNanosecondsPerFrame)
        }
        let frames = Double(frame - current.frame)
        let predicted = current.time + frames * current.nanosecondsPerFrame
        let error = measured - predicted
        guard abs(error) <= Self.outlierDistance else {
            // Held apart: a report that agrees with the outliers before it counts towards a new line.
            if let first = outliers, frame > first.frame,
               abs(measured - (first.time + Double(frame - first.frame) * nominalNanosecondsPerFrame)) <= Self.largestError {
                outliers = (first.frame, first.time, first.count + 1)
            } else {
                outliers = (frame, measured, 1)
            }
            if let confirmed = outliers, confirmed.count >= Self.confirmingReports {
                return startLine(at: frame, heardAt: hostTime, nanosecondsPerFrame: nominalNanosecondsPerFrame)
            }
            return UInt64(max(0, predicted.rounded()))
        }
        outliers = nil
        let counted = min(max(error, -Self.largestError), Self.largestError)
        // A second-order loop (phase and rate), critically damped, its gains for this report's interval.
        let interval = frames * current.nanosecondsPerFrame
        lineAge += interval
        let bandwidth = lineAge < Self.acquisitionSeconds * 1e9 ? Self.acquisitionBandwidth : Self.bandwidth
        // At most 0.5: reports further apart than the loop's time constant would make it ring.
        let omega = min(2 * Double.pi * bandwidth * interval / 1e9, 0.5)
        let phaseGain = min(2.0.squareRoot() * omega, 1), rateGain = omega * omega
        let limit = nominalNanosecondsPerFrame * Self.maximumRateDeviation
        let rate = min(max(current.nanosecondsPerFrame + rateGain * counted / frames, nominalNanosecondsPerFrame - limit),
                       nominalNanosecondsPerFrame + limit)
        let time = predicted + phaseGain * counted
        line = (frame, time, rate)
        return UInt64(max(0, time.rounded()))
    }

    /// Starts the line at a report, taken as it is, and returns its time.
    private mutating func startLine(at frame: Int64, heardAt hostTime: UInt64, nanosecondsPerFrame: Double) -> UInt64 {
        line = (frame, Double(hostTime), nanosecondsPerFrame)
        lineAge = 0
        outliers = nil
        return hostTime
    }
}
