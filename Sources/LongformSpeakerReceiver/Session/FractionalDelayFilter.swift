#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a signal between its frames: a Kaiser-windowed sinc of `tapCount` taps, tabulated at
/// `phaseCount` fractions of a frame, and four-point cubic (Hermite) interpolation where the sinc
/// would reach digital silence.
///
/// A speaker correcting drift reads its buffer at a step a little off 1, so the fraction it reads
/// at sweeps through every value (0 to 1 in a tenth of a second on a clock 200 ppm off); the filter
/// must be the same pure delay at every fraction, or the sweep is heard as a warble. Cubic
/// interpolation alone is 13 dB down at 20 kHz halfway between two frames and none at a whole
/// frame: pink noise to 20 kHz read so at 200 ppm correlates with the exact signal at 0.9965. This
/// sinc reads it at 0.9999997 (24 taps: 0.99999), and at a whole frame it is the frame itself.
enum FractionalDelayFilter {
    /// Frames read around each output frame.
    static let tapCount = 32
    /// Frames the sinc reads on each side of the point: a reader keeps this many behind its
    /// position, and what it reads this close to a frame it lacks (read as silence) is cubic.
    static let reach = tapCount / 2
    /// Fractions of a frame tabulated; a read rounds to the nearest (at most 1/2,048 of a frame).
    static let phaseCount = 1_024
    /// The Kaiser window's β: 6 keeps 20 kHz within 0.35 dB; 9 flattened the ripple but cost
    /// 1.5 dB there.
    static let beta = 6.0

    /// `tapCount` coefficients for each of `phaseCount + 1` fractions (the last is a whole frame
    /// on, so that a fraction rounded up to 1 needs no wrap), each row summing to 1.
    static let table: [Float] = {
        var table: [Float] = []
        table.reserveCapacity((phaseCount + 1) * tapCount)
        let normaliser = besselI0(beta)
        for phase in 0...phaseCount {
            let fraction = Double(phase) / Double(phaseCount)
            var row: [Double] = []
            for tap in 0..<tapCount {
                // Tap `tap` reads frame `whole − reach + 1 + tap`: this far from the point read.
                let distance = Double(tap - reach + 1) - fraction
                let relative = distance / Double(reach)
                let window = besselI0(beta * max(0, 1 - relative * relative).squareRoot()) / normaliser
                row.append(sinc(distance) * window)
            }
            let sum = row.reduce(0, +)
            table += row.map { Float($0 / sum) }
        }
        return table
    }()

    /// Appends to `output` `count` frames of `channels` interleaved channels read from `source` at
    /// `start`, `start + step`, …, positions in `source`'s frames: `source` holds `reach − 1`
    /// frames before `start` and `reach + 1` after the last position.
    ///
    /// Where the taps reach a frame of digital silence (every channel exactly 0: the silence a
    /// sender renders before a start, after an end or during a pause, and what a buffer reads for
    /// frames it lacks), the frame is cubic instead: the sinc would ring across such an edge for
    /// `reach` frames on either side, the cubic for 2.
    static func read(_ source: [Float], channels: Int, from start: Double, count: Int, step: Double, into output: inout [Float]) {
        let frames = source.count / channels
        precondition(Int(start.rounded(.down)) >= reach - 1 && Int((start + Double(count - 1) * step).rounded(.down)) + reach < frames,
                     "a fractional read reaches past its source")
        // silentBefore[i]: how many of the frames before frame i are digital silence.
        var silentBefore = [Int32](repeating: 0, count: frames + 1)
        source.withUnsafeBufferPointer { source in
            for frame in 0..<frames {
                var isSilent = true
                for channel in 0..<channels where source[frame * channels + channel] != 0 { isSilent = false; break }
                silentBefore[frame + 1] = silentBefore[frame] + (isSilent ? 1 : 0)
            }
        }
        let written = output.count
        output.append(contentsOf: repeatElement(0, count: count * channels))
        // Locals, raw pointers, `while` loops and eight taps a step: a debug build calls a function
        // for each static read, checked subscript and range step, and the tests' speakers are debug
        // builds. So written, a second of stereo takes 7 ms there (27 ms as a plain loop, which
        // made a speaker's block of 0.26 s take up to 44 ms under load; cubic: 5 ms).
        let taps = tapCount, reach = reach, phases = Double(phaseCount)
        source.withUnsafeBufferPointer { sourceBuffer in
            table.withUnsafeBufferPointer { tableBuffer in
                output.withUnsafeMutableBufferPointer { outputBuffer in
                    let samples = sourceBuffer.baseAddress!, coefficientsBase = tableBuffer.baseAddress!
                    var out = outputBuffer.baseAddress! + written
                    for index in 0..<count {
                        let point = start + Double(index) * step
                        let whole = Int(point.rounded(.down))
                        let firstFrame = whole - reach + 1
                        if silentBefore[firstFrame + taps] != silentBefore[firstFrame] {
                            let fraction = Float(point - Double(whole))
                            for channel in 0..<channels {
                                out[channel] = cubic(samples + (whole - 1) * channels + channel, stride: channels, at: fraction)
                            }
                            out += channels
                            continue
                        }
                        let coefficients = coefficientsBase + Int(((point - Double(whole)) * phases).rounded()) * taps
                        if channels == 2 {
                            // Stereo, both channels in one pass over the taps: each coefficient is
                            // read once, and the sums are the general loop's, term for term.
                            var sample = samples + firstFrame * 2
                            var tap = 0
                            var left: Float = 0, right: Float = 0
                            while tap < taps {
                                let c = coefficients + tap
                                let c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3], c4 = c[4], c5 = c[5], c6 = c[6], c7 = c[7]
                                left += ((sample[0] * c0 + sample[2] * c1) + (sample[4] * c2 + sample[6] * c3))
                                    + ((sample[8] * c4 + sample[10] * c5) + (sample[12] * c6 + sample[14] * c7))
                                right += ((sample[1] * c0 + sample[3] * c1) + (sample[5] * c2 + sample[7] * c3))
                                    + ((sample[9] * c4 + sample[11] * c5) + (sample[13] * c6 + sample[15] * c7))
                                sample += 16
                                tap += 8
                            }
                            out[0] = left
                            out[1] = right
                            out += 2
                            continue
                        }
                        var channel = 0
                        while channel < channels {
                            var sample = samples + firstFrame * channels + channel
                            var tap = 0
                            var sum: Float = 0
                            // Eight taps a step (`tapCount` is a multiple of 8).
                            while tap < taps {
                                let c = coefficients + tap
                                let s0 = sample[0] * c[0], s1 = sample[channels] * c[1]
                                let s2 = sample[2 * channels] * c[2], s3 = sample[3 * channels] * c[3]
                                let s4 = sample[4 * channels] * c[4], s5 = sample[5 * channels] * c[5]
                                let s6 = sample[6 * channels] * c[6], s7 = sample[7 * channels] * c[7]
                                sum += ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
                                sample += 8 * channels
                                tap += 8
                            }
                            out[channel] = sum
                            channel += 1
                        }
                        out += channels
                    }
                }
            }
        }
    }

    /// Four-point cubic (Hermite) interpolation at `fraction` between the second and third of the
    /// four samples from `first`, `stride` apart.
    static func cubic(_ first: UnsafePointer<Float>, stride: Int, at fraction: Float) -> Float {
        let y0 = first.pointee, y1 = first[stride], y2 = first[2 * stride], y3 = first[3 * stride]
        let c1 = 0.5 * (y2 - y0)
        let c2 = y0 - 2.5 * y1 + 2 * y2 - 0.5 * y3
        let c3 = 0.5 * (y3 - y0) + 1.5 * (y1 - y2)
        return ((c3 * fraction + c2) * fraction + c1) * fraction + y1
    }

    /// sin(πx)/(πx).
    private static func sinc(_ x: Double) -> Double {
        x == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x)
    }

    /// The modified Bessel function of the first kind, order 0, by its series.
    private static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0, k = 1.0
        while term > sum * 1e-12 {
            term *= (x / (2 * k)) * (x / (2 * k))
            sum += term
            k += 1
        }
        return sum
    }
}
