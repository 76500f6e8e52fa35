import Foundation

/// A signal that says which frame it is: the left channel rises one step a frame (wrapping every
/// 16,384 frames) and the right channel is its negative. What a speaker played of it shows every
/// frame lost, repeated or out of place, also across pauses.
public enum RampAudio {
    /// The value of frame `frame` in the left channel.
    public static func value(ofFrame frame: Int64) -> Int16 { Int16(frame % 16_384) }

    /// Makes (once) a 16-bit stereo WAV of the ramp, `seconds` long at 44.1 kHz; returns its path.
    public static func file(named name: String, seconds: Double) throws -> String {
        let path = TestAudio.path(name + ".wav")
        if FileManager.default.fileExists(atPath: path) { return path }
        let frames = Int(seconds * 44_100)
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8)); append(UInt32(36 + frames * 4))
        data.append(contentsOf: Array("WAVEfmt ".utf8)); append(UInt32(16)); append(UInt16(1)); append(UInt16(2))
        append(UInt32(44_100)); append(UInt32(44_100 * 4)); append(UInt16(4)); append(UInt16(16))
        data.append(contentsOf: Array("data".utf8)); append(UInt32(frames * 4))
        data.reserveCapacity(data.count + frames * 4)
        for frame in 0..<Int64(frames) {
            append(value(ofFrame: frame))
            append(-value(ofFrame: frame))
        }
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// One stretch of the ramp between silences.
    public struct Piece: CustomStringConvertible {
        /// The left channel's values.
        public var values: [Int32]
        /// The first index where a step is neither 0, 1 nor 2, away from a wrap and from the
        /// piece's ends (a resampler rings where the audio steps to silence).
        public var firstBadStep: Int?

        /// Frames in it.
        public var count: Int { values.count }
        /// Its first and last values, away from the ringing at its ends.
        public var first: Int32 { values[min(RampAudio.ringingFrames, values.count - 1)] }
        /// See `first`.
        public var last: Int32 { values[max(values.count - 1 - RampAudio.ringingFrames, 0)] }

        /// Whether every frame in it played once, in order: no bad step, and from its first to
        /// its last value the ramp rose by the frames in between, within `tolerance` frames and
        /// 1,000 ppm of the piece (a speaker correcting its output's drift resamples by up to
        /// that, and its values round either way).
        public func isContinuous(tolerance: Int) -> Bool {
            firstBadStep == nil
                && RampAudio.distance(from: first, to: last, frames: count - 1 - 2 * RampAudio.ringingFrames) <= tolerance + RampAudio.resamplingAllowance(count)
        }

        public var description: String {
            "\(count) frames from \(values.first ?? -1) to \(values.last ?? -1)"
                + (firstBadStep.map { ", a jump at \($0): \(Array(values[max(0, $0 - 3)...min(values.count - 1, $0 + 3)]))" } ?? "")
        }
    }

    /// What an output played of the ramp: its pieces between silences (runs of 64 or more zeros).
    public struct Played: CustomStringConvertible {
        /// The pieces, in order; leading and trailing silence left out.
        public var pieces: [Piece]
        /// The frames of each silence between two pieces.
        public var silenceLengths: [Int]

        public var description: String { "pieces \(pieces), silences \(silenceLengths)" }

        /// The same, with each piece also split where the ramp jumps (a seek heard without a
        /// silence of 64 frames before it). The frames between the two parts, counted as their
        /// silence, are the resampler's ringing about the jump and any shorter silence.
        public func splitAtJumps() -> Played {
            var split = Played(pieces: [], silenceLengths: [])
            for (index, piece) in pieces.enumerated() {
                if index > 0 { split.silenceLengths.append(silenceLengths[index - 1]) }
                var rest = piece
                while let jump = rest.firstBadStep {
                    split.pieces.append(Piece(values: Array(rest.values[..<jump]), firstBadStep: nil))
                    let resumed = RampAudio.firstRising(in: rest.values, from: jump)
                    split.silenceLengths.append(resumed - jump)
                    let tail = Array(rest.values[resumed...])
                    rest = Piece(values: tail, firstBadStep: RampAudio.firstBadStep(in: tail))
                }
                split.pieces.append(rest)
            }
            return split
        }
    }

    /// The first index from `start` where the ramp rises cleanly for `2 * ringingFrames` frames
    /// (silence and ringing do not); the last index if it never does again.
    static func firstRising(in values: [Int32], from start: Int) -> Int {
        let span = 2 * ringingFrames
        var index = start
        while index + span < values.count && distance(from: values[index], to: values[index + span], frames: span) > 2 { index += 1 }
        return min(index, values.count - 1)
    }

    /// How far `frames` frames played may be from as many frames of the source: 1,000 ppm, the
    /// most a speaker resamples by to follow the network clock.
    public static func resamplingAllowance(_ frames: Int) -> Int { frames / 1_000 + 1 }

    /// Frames at either end of a piece where a resampler may ring.
    public static let ringingFrames = 3

    /// How far the ramp's value `to` is from where it should be `frames` frames after `from`, in frames.
    public static func distance(from: Int32, to: Int32, frames: Int) -> Int {
        let expected = (Int(from) + frames) % 16_384
        let difference = abs(Int(to) - expected) % 16_384
        return min(difference, 16_384 - difference)
    }

    /// Reads the ramp out of the left channel of what an output played.
    public static func played(left: [Int32]) -> Played {
        var pieces: [[Int32]] = [[]]
        var silenceLengths: [Int] = []
        var index = 0
        while index < left.count {
            var end = index
            while end < left.count && left[end] == 0 { end += 1 }
            if end - index >= 64 {
                if !pieces[pieces.count - 1].isEmpty && end < left.count {
                    silenceLengths.append(end - index)
                    pieces.append([])
                }
                index = end
                continue
            }
            end = max(end, index + 1)
            pieces[pieces.count - 1].append(contentsOf: left[index..<end])
            index = end
        }
        if pieces[pieces.count - 1].isEmpty { pieces.removeLast() }
        return Played(pieces: pieces.map { Piece(values: $0, firstBadStep: firstBadStep(in: $0)) }, silenceLengths: silenceLengths)
    }

    /// The first index, away from the ends' ringing, where the ramp steps by other than 0, 1 or 2
    /// frames and does not run on across the step. Only a wrap is excused, and only by the ramp
    /// running on from the frames before its ringing to those after: values near 0 or 16,383 do
    /// not tell a wrap, since a seek's ringing and a silence under 64 frames reach them too.
    private static func firstBadStep(in values: [Int32]) -> Int? {
        guard values.count > 2 * ringingFrames + 1 else { return nil }
        for index in (ringingFrames + 1)..<(values.count - ringingFrames) {
            let step = (Int(values[index]) - Int(values[index - 1]) + 16_384) % 16_384
            if (0...2).contains(step) { continue }
            // A resampler rings for at most `ringingFrames` frames either side of the wrap's fall.
            let before = index - 2 - ringingFrames, after = index + 2 * ringingFrames
            if before >= 0 && after < values.count,
               distance(from: values[before], to: values[after], frames: after - before) <= 2 {
                continue
            }
            return index
        }
        return nil
    }

    /// Reads the ramp out of a WAV file an output wrote.
    public static func played(wav path: String) throws -> Played {
        let written = try WAVFileReader(path: path).integerSamples
        return played(left: stride(from: 0, to: written.count, by: 2).map { written[$0] })
    }
}
