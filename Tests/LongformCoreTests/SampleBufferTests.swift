import LongformCore
import Testing

@Suite struct SampleBufferTests {
    private func buffer(frames: Int, rate: Int = 44_100) -> SampleBuffer {
        let format = AudioFormat(sampleRate: rate, channelCount: 2, sampleFormat: .int16)
        return SampleBuffer(pcmFormat: format, planes: [[UInt8](repeating: 0, count: frames * 4)], frameCount: frames,
                            presentationTime: MediaTime(value: 1000, timescale: Int32(rate)))
    }

    @Test func outputTimeIsPresentationTimePlusStartTrimUnlessSet() {
        var sample = buffer(frames: 4410)
        #expect(sample.duration == MediaTime(value: 1, timescale: 10))
        #expect(sample.outputPresentationTime == sample.presentationTime)
        sample.trimDurationAtStart = MediaTime(value: 441, timescale: 44_100)
        sample.trimDurationAtEnd = MediaTime(value: 882, timescale: 44_100)
        #expect(sample.outputPresentationTime == MediaTime(value: 1441, timescale: 44_100))
        #expect(sample.outputDuration == MediaTime(value: 3087, timescale: 44_100))
        #expect(sample.trimmedFramesAtStart == 441 && sample.trimmedFramesAtEnd == 882 && sample.outputFrameCount == 3087)
        sample.outputPresentationTime = MediaTime(value: 5, timescale: 1)
        #expect(sample.outputPresentationTime == MediaTime(value: 5, timescale: 1))
        sample.outputPresentationTime = .invalid
        #expect(sample.outputPresentationTime == MediaTime(value: 1441, timescale: 44_100))
    }

    @Test func trimsNeverExceedTheBuffer() {
        var sample = buffer(frames: 100)
        sample.trimDurationAtStart = MediaTime(value: 1, timescale: 1)
        #expect(sample.trimmedFramesAtStart == 100 && sample.outputFrameCount == 0)
    }

    @Test func formatsDescribeThemselves() {
        let planar = AudioFormat(sampleRate: 48_000, channelCount: 6, sampleFormat: .float32, isInterleaved: false)
        #expect(planar.planeCount == 6 && planar.bytesPerFrameInPlane == 4)
        let packed24 = AudioFormat(sampleRate: 96_000, channelCount: 2, sampleFormat: .int32, bitsPerSample: 24)
        #expect(packed24.description.contains("24-bit"))
    }
}
