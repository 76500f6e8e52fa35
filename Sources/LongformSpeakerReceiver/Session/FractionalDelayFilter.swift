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
        let silentBefore = silentFramesBefore(source, channels: channels)
        let written = output.count
        output.append(contentsOf: repeatElement(0, count: count * channels))
        // Locals, raw pointers, `while` loops and eight taps a step: a debug build calls a function
        // for each static read, checked subscript and range step, and the tests' speakers are debug
        // builds. So written, a second of stereo takes 7 ms there (27 ms as a plain loop, which
        // made a speaker's block of 0.26 s take up to 44 ms under load; cubic: 5 ms).
        let taps = tapCount, reach = reach, phases = Double(phaseCount)
        source.withUnsafeBufferPointer { sourceBuffer in
            stereoTable.withUnsafeBufferPointer { stereoBuffer in
                table.withUnsafeBufferPointer { tableBuffer in
                    output.withUnsafeMutableBufferPointer { outputBuffer in
                        silentBefore.withUnsafeBufferPointer { silentBefore in
                            let samples = sourceBuffer.baseAddress!, coefficientsBase = tableBuffer.baseAddress!, stereoBase = stereoBuffer.baseAddress!
                            var out = outputBuffer.baseAddress! + written
                            for index in 0..<count {
                                let point = start + Double(index) * step
                                // Not negative (the precondition): truncation is the floor, without libm's call.
                                let whole = Int(point)
                                let firstFrame = whole - reach + 1
                                if silentBefore[firstFrame + taps] != silentBefore[firstFrame] {
                                    let fraction = Float(point - Double(whole))
                                    for channel in 0..<channels {
                                        out[channel] = cubic(samples + (whole - 1) * channels + channel, stride: channels, at: fraction)
                                    }
                                    out += channels
                                    continue
                                }
                                let coefficients = coefficientsBase + Int((point - Double(whole)) * phases + 0.5) * taps
                                if channels == 2 {
                                    let stereo = stereoBase + (coefficients - coefficientsBase) * 2
                                    let sums = lanes(samples + firstFrame * 2, stereo)
                                    out[0] = sums.0
                                    out[1] = sums.1
                                    out += 2
                                    continue
                                }
                                var channel = 0
                                while channel < channels {
                                    out[channel] = lane(samples + firstFrame * channels + channel, stride: channels, coefficients)
                                    channel += 1
                                }
                                out += channels
                            }
                        }
                    }
                }
            }
        }
    }

    /// Element i: how many of `source`'s frames before frame i are digital silence (every channel
    /// exactly 0), for frames 0 to the last plus one.
    static func silentFramesBefore(_ source: [Float], channels: Int) -> [Int32] {
        let frames = source.count / channels
        var silentBefore = [Int32](repeating: 0, count: frames + 1)
        source.withUnsafeBufferPointer { source in
            silentBefore.withUnsafeMutableBufferPointer { silentBefore in
                let samples = source.baseAddress!, counts = silentBefore.baseAddress!
                if channels == 2 {
                    // Both samples compared, then one add: the loop over channels with its early exit
                    // was a sixth of the filter's time.
                    for frame in 0..<frames {
                        let isSilent = (samples[2 * frame] == 0 ? 1 : 0) & (samples[2 * frame + 1] == 0 ? 1 : 0) as Int32
                        counts[frame + 1] = counts[frame] + isSilent
                    }
                    return
                }
                for frame in 0..<frames {
                    var isSilent = true
                    for channel in 0..<channels where samples[frame * channels + channel] != 0 { isSilent = false; break }
                    counts[frame + 1] = counts[frame] + (isSilent ? 1 : 0)
                }
            }
        }
        return silentBefore
    }

    /// `table` with each coefficient twice, for interleaved stereo.
    static let stereoTable: [Float] = table.flatMap { [$0, $0] }

    /// Both channels of interleaved stereo from `samples`, `tapCount` frames, weighed by `coefficients`
    /// (from `stereoTable`): sixteen sums side by side in four four-wide vectors, each sum over
    /// every eighth frame, then added pairwise, so that the result is `lane`'s for each channel,
    /// bit for bit. Written with `SIMD4` rather than sixteen scalars: the compiler vectorised those
    /// two wide, and the filter was the largest part of a playing speaker's CPU (a read of 2,205
    /// frames 22.6–29.6 ns a frame, four wide 14.3–18.5: docs/bench-log/2026-11-29-session34-filter-and-clock.md).
    @inline(__always)
    static func lanes(_ samples: UnsafePointer<Float>, _ coefficients: UnsafePointer<Float>) -> (Float, Float) {
        let s = UnsafeRawPointer(samples), c = UnsafeRawPointer(coefficients)
        @inline(__always) func product(_ offset: Int) -> SIMD4<Float> {
            s.loadUnaligned(fromByteOffset: offset * 4, as: SIMD4<Float>.self) * c.loadUnaligned(fromByteOffset: offset * 4, as: SIMD4<Float>.self)
        }
        // Lane k of vector v sums the products at 4v + k + 16m, m = 0…3: the scalar a(4v + k).
        var v0 = product(0), v1 = product(4), v2 = product(8), v3 = product(12)
        var index = 16
        while index < 2 * tapCount {
            v0 += product(index); v1 += product(index + 4); v2 += product(index + 8); v3 += product(index + 12)
            index += 16
        }
        // Lanes 0 and 2 hold the left channel's frames (a0 + a8) + (a4 + a12) and (a2 + a10) +
        // (a6 + a14), lanes 1 and 3 the right's.
        let sums = (v0 + v2) + (v1 + v3)
        return (sums[0] + sums[2], sums[1] + sums[3])
    }

    /// One channel from `first` (`stride` apart), `tapCount` frames, weighed by `coefficients`:
    /// eight sums, each over every eighth frame, added as `lanes` adds them.
    @inline(__always)
    static func lane(_ first: UnsafePointer<Float>, stride: Int, _ coefficients: UnsafePointer<Float>) -> Float {
        var a0 = first[0] * coefficients[0], a1 = first[stride] * coefficients[1], a2 = first[2 * stride] * coefficients[2]
        var a3 = first[3 * stride] * coefficients[3], a4 = first[4 * stride] * coefficients[4], a5 = first[5 * stride] * coefficients[5]
        var a6 = first[6 * stride] * coefficients[6], a7 = first[7 * stride] * coefficients[7]
        var tap = 8
        while tap < tapCount {
            let s = first + tap * stride, c = coefficients + tap
            a0 += s[0] * c[0]; a1 += s[stride] * c[1]; a2 += s[2 * stride] * c[2]; a3 += s[3 * stride] * c[3]
            a4 += s[4 * stride] * c[4]; a5 += s[5 * stride] * c[5]; a6 += s[6 * stride] * c[6]; a7 += s[7 * stride] * c[7]
            tap += 8
        }
        return ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7))
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
