import LongformSpeakerReceiver
import Testing

/// The speaker's buffer: frames come back as written, across the ring's end, with silence where
/// nothing is held.
@Suite struct SpeakerBufferTests {
    /// Frames `first..<first+count` of a mono ramp whose sample is its frame number.
    static func ramp(_ first: Int64, _ count: Int) -> [Float] { (0..<count).map { Float(first + Int64($0)) } }

    @Test func framesComeBackAsWrittenAcrossTheRingsEnd() {
        var buffer = SpeakerBuffer(channelCount: 1, capacityFrames: 10)
        #expect(buffer.write(Self.ramp(100, 6)[...], at: 100) == 6)
        var output: [Float] = []
        buffer.read(from: 100, count: 6, into: &output)
        #expect(output == Self.ramp(100, 6))
        buffer.discard(before: 104)
        // 8 more: 2 held + 8 = 10, wrapping around the ring.
        #expect(buffer.write(Self.ramp(106, 8)[...], at: 106) == 8)
        #expect(buffer.startFrame == 104 && buffer.endFrame == 114 && buffer.room == 0)
        buffer.read(from: 102, count: 14, into: &output)
        #expect(output == [0, 0] + Self.ramp(104, 10) + [0, 0], "silence outside what is held")
        // Full: nothing more fits.
        #expect(buffer.write(Self.ramp(114, 3)[...], at: 114) == 0)
    }

    @Test func aGapIsSilenceARewriteReplacesTheTailAndAFlushCutsIt() {
        var buffer = SpeakerBuffer(channelCount: 2, capacityFrames: 100)
        buffer.write([1, 1, 2, 2, 3, 3][...], at: 0)
        buffer.write([9, 9][...], at: 5)
        var output: [Float] = []
        buffer.read(from: 0, count: 6, into: &output)
        #expect(output == [1, 1, 2, 2, 3, 3, 0, 0, 0, 0, 9, 9])
        // A resend from frame 1 replaces frames 1 onwards.
        buffer.write([7, 7][...], at: 1)
        buffer.read(from: 0, count: 6, into: &output)
        #expect(output == [1, 1, 7, 7, 0, 0, 0, 0, 0, 0, 0, 0] && buffer.endFrame == 2)
        buffer.truncate(from: 1)
        #expect(buffer.endFrame == 1)
        buffer.removeAll()
        #expect(buffer.isEmpty)
        // An empty buffer starts wherever the audio does.
        buffer.write([5, 5][...], at: 1_000_000)
        #expect(buffer.startFrame == 1_000_000 && buffer.endFrame == 1_000_001)
    }
}
