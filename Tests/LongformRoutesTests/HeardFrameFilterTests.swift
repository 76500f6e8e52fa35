@testable import LongformRoutes
import Testing

/// The PulseAudio route's clock smoothing, fed with made-up reports: a device that plays at a
/// steady rate (a little off the nominal one), reported with noise, with single late reports (a
/// loaded host), and once a jump.
@Suite struct HeardFrameFilterTests {
    /// A repeatable noise in −1…1 (a linear congruential generator).
    struct Noise {
        var state: UInt64 = 12_345
        mutating func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53) * 2 - 1
        }
    }

    @Test func noisyReportsOfASteadyDeviceGiveItsTrueTimesLateOnesAreIgnoredAndAJumpIsFollowedOnceConfirmed() {
        let rate = 44_100
        // The device runs 80 ppm slow against the host clock, from host time 1 s.
        let nanosecondsPerFrame = 1e9 / Double(rate) * (1 + 80e-6)
        func truth(_ frame: Int64) -> Double { 1e9 + Double(frame) * nanosecondsPerFrame }
        var filter = HeardFrameFilter(sampleRate: rate)
        var noise = Noise()
        var rawErrors: [Double] = [], smoothedErrors: [Double] = []
        // A report a second for 10 minutes, each off by up to ±400 µs.
        for second in 0..<600 {
            let frame = Int64(second * rate)
            let reported = truth(frame) + noise.next() * 400_000
            let smoothed = Double(filter.add(frame: frame, heardAt: UInt64(reported)))
            if second >= 120 {
                rawErrors.append(abs(reported - truth(frame)))
                smoothedErrors.append(abs(smoothed - truth(frame)))
            }
        }
        let raw = rawErrors.sorted()[rawErrors.count / 2], smoothed = smoothedErrors.sorted()[smoothedErrors.count / 2]
        #expect(smoothed < raw / 4, "median error after 2 min: \(smoothed) ns smoothed, \(raw) ns reported")
        #expect(smoothedErrors.max()! < rawErrors.max()! / 2, "worst after 2 min: \(smoothedErrors.max()!) ns smoothed, \(rawErrors.max()!) ns reported")
        // The same report read again (no fresh one since) changes nothing; the line read a second
        // later gives that moment's frame, on the device's own rate.
        let last = Int64(599 * rate)
        let again = filter.add(frame: last, heardAt: UInt64(truth(last) + 300_000))
        #expect(again == filter.add(frame: last, heardAt: UInt64(truth(last) - 300_000)))
        if let point = filter.point(near: UInt64(truth(last) + 1e9)) {
            #expect(abs(Double(point.hostTime) - truth(point.frame)) < rawErrors.max()! / 2, "a second on: \(Double(point.hostTime) - truth(point.frame)) ns off")
        } else {
            Issue.record("no line")
        }
        // A loaded host: single reports 9 ms and 3 ms late, between good ones. None moves the line
        // by more than the reports' own noise (the one 3 ms late counts as 1 ms).
        for (second, lateness) in [(600, 9_000_000.0), (601, 0), (602, 3_000_000), (603, 0), (604, 9_000_000), (605, 0)] {
            let frame = Int64(second * rate)
            let smoothed = Double(filter.add(frame: frame, heardAt: UInt64(truth(frame) + lateness)))
            #expect(abs(smoothed - truth(frame)) < rawErrors.max()!, "second \(second), a report \(lateness) ns late: the line is \(smoothed - truth(frame)) ns off")
        }
        // An underrun moves the device 30 ms: the line follows once three reports in a row agree.
        for second in 606..<609 {
            let frame = Int64(second * rate)
            let smoothed = filter.add(frame: frame, heardAt: UInt64(truth(frame) + 30_000_000))
            #expect((smoothed == UInt64(truth(frame) + 30_000_000)) == (second == 608), "second \(second): \(Double(smoothed) - truth(frame)) ns off")
        }
    }
}
