import Foundation
@testable import LongformSpeakerReceiver
import Testing

/// The speaker's reads between frames, against the exact signal: the same pure delay at every
/// fraction a drifting read sweeps through, the frame itself at a whole frame, and no ringing
/// into the silence around audio.
@Suite struct FractionalDelayFilterTests {
    static let rate = 44_100.0

    /// Two sines, stereo (the right channel at half the left's amplitude), at `frame` (fractional).
    static func tones(_ low: Double, _ high: Double, at frame: Double) -> [Float] {
        let t = frame / rate
        let left = 0.5 * sin(2 * Double.pi * low * t) + 0.3 * sin(2 * Double.pi * high * t + 0.7)
        return [Float(left), Float(left / 2)]
    }

    /// The error, in dB under the signal, of `count` frames read at 200 ppm fast from frame 100.3.
    static func errorOfDriftingRead(low: Double, high: Double, count: Int = 4_410) -> Double {
        let step = 1 + 200e-6, start = 100.3
        let source = (0..<(count + 200)).flatMap { tones(low, high, at: Double($0)) }
        var read: [Float] = []
        FractionalDelayFilter.read(source, channels: 2, from: start, count: count, step: step, into: &read)
        var signal = 0.0, error = 0.0
        for index in 0..<count {
            let exact = tones(low, high, at: start + Double(index) * step)
            for channel in 0..<2 {
                signal += Double(exact[channel] * exact[channel])
                error += Double((read[2 * index + channel] - exact[channel]) * (read[2 * index + channel] - exact[channel]))
            }
        }
        return 10 * log10(error / signal)
    }

    @Test func aDriftingReadIsThePureDelayAtEveryFractionItSweeps() {
        // 200 ppm sweeps the fraction from 0.3 through 1 and on to 0.18 over 4,410 frames.
        // Measured: 65.5 and 36.9 dB under; cubic interpolation, which this filter replaced: 10.6 and 8.0.
        #expect(Self.errorOfDriftingRead(low: 1_000, high: 18_000) < -60)
        #expect(Self.errorOfDriftingRead(low: 10_000, high: 20_000) < -33)
    }

    @Test func aWholeFrameReadsTheFrameItself() {
        let source = (0..<64).flatMap { Self.tones(440, 15_000, at: Double($0)) }
        var read: [Float] = []
        FractionalDelayFilter.read(source, channels: 2, from: 20, count: 8, step: 1, into: &read)
        #expect(read == Array(source[40..<56]))
    }

    @Test func audioBesideDigitalSilenceRingsNoFurtherThanTheCubic() {
        // 60 frames of silence, then a tone: read at 200 ppm across the edge.
        let edge = 60, start = 20.5, count = 80, step = 1 + 200e-6
        let source = (0..<160).flatMap { $0 < edge ? [Float](repeating: 0, count: 2) : Self.tones(1_000, 12_000, at: Double($0)) }
        var read: [Float] = []
        FractionalDelayFilter.read(source, channels: 2, from: start, count: count, step: step, into: &read)
        for index in 0..<count {
            let point = start + Double(index) * step
            // The cubic reads one frame past its point's: silence up to two frames before the edge.
            if point < Double(edge - 2) { #expect(read[2 * index] == 0 && read[2 * index + 1] == 0, "frame \(index) at \(point)") }
            // Past the sinc's reach from the edge, the filter is the sinc again: close to the exact signal.
            if point > Double(edge + FractionalDelayFilter.reach) {
                #expect(abs(read[2 * index] - Self.tones(1_000, 12_000, at: point)[0]) < 1e-3, "frame \(index) at \(point)")
            }
        }
    }

    @Test func stereoReadsEachChannelExactlyAsAChannelReadAlone() {
        // The stereo pass against the general loop (one channel at a time), sample for sample,
        // through a drift, a whole-frame stretch and the edge of a silence.
        let source = (0..<2_400).flatMap { $0 >= 1_200 && $0 < 1_300 ? [Float](repeating: 0, count: 2) : Self.tones(700, 13_000, at: Double($0)) }
        for (start, step) in [(40.37, 1 + 350e-6), (40.0, 1.0), (900.8, 1 - 120e-6)] {
            let count = 1_400
            var stereo: [Float] = [], left: [Float] = [], right: [Float] = []
            FractionalDelayFilter.read(source, channels: 2, from: start, count: count, step: step, into: &stereo)
            FractionalDelayFilter.read(source.enumerated().filter { $0.offset % 2 == 0 }.map(\.element), channels: 1, from: start, count: count, step: step, into: &left)
            FractionalDelayFilter.read(source.enumerated().filter { $0.offset % 2 == 1 }.map(\.element), channels: 1, from: start, count: count, step: step, into: &right)
            #expect(stereo.count == 2 * count)
            #expect(stereo.enumerated().filter { $0.offset % 2 == 0 }.map(\.element) == left, "left from \(start) at \(step)")
            #expect(stereo.enumerated().filter { $0.offset % 2 == 1 }.map(\.element) == right, "right from \(start) at \(step)")
        }
    }

    @Test func aReadAppendsToWhatTheOutputHeld() {
        let source = (0..<200).flatMap { Self.tones(440, 9_000, at: Double($0)) }
        var read: [Float] = [7, 8]
        FractionalDelayFilter.read(source, channels: 2, from: 30.25, count: 10, step: 1, into: &read)
        var fresh: [Float] = []
        FractionalDelayFilter.read(source, channels: 2, from: 30.25, count: 10, step: 1, into: &fresh)
        #expect(read == [7, 8] + fresh)
    }
}
