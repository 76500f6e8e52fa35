import CFFmpeg
import LongformCore

/// Gathers decoded frames into sample buffers of one format and contiguous positions.
struct PCMAccumulator {
    private(set) var format: AudioFormat?
    private var planes: [[UInt8]] = []
    private(set) var frameCount = 0
    private var startPosition: Int64 = 0
    /// Buffers closed by a format change or a jump in position, waiting to be delivered.
    private var finished: [SampleBuffer] = []

    /// Whether a closed buffer is waiting.
    var hasFinishedBuffer: Bool { !finished.isEmpty }

    /// Appends frames `range` of a decoded FFmpeg frame that starts at item frame `position`.
    mutating func append(frame: UnsafeMutablePointer<AVFrame>, format frameFormat: AudioFormat, range: Range<Int>, position: Int64, sourceFormat: AVSampleFormat) {
        if frameCount > 0 && (frameFormat != format || position != startPosition + Int64(frameCount)) {
            closeCurrent()
        }
        if frameCount == 0 {
            format = frameFormat
            planes = Array(repeating: [], count: frameFormat.planeCount)
            startPosition = position
        }
        let bytesPerFrame = frameFormat.bytesPerFrameInPlane
        let samplesPerFrame = frameFormat.isInterleaved ? frameFormat.channelCount : 1
        for plane in 0..<frameFormat.planeCount {
            guard let data = frame.pointee.extended_data[plane] else { continue }
            switch sourceFormat {
            case AV_SAMPLE_FMT_U8, AV_SAMPLE_FMT_U8P:
                // Unsigned 8-bit widens to signed 16-bit exactly.
                let samples = UnsafeBufferPointer(start: data, count: range.upperBound * samplesPerFrame)[(range.lowerBound * samplesPerFrame)...]
                planes[plane].reserveCapacity(planes[plane].count + samples.count * 2)
                for sample in samples {
                    let widened = (Int16(sample) - 128) << 8
                    withUnsafeBytes(of: widened.littleEndian) { planes[plane].append(contentsOf: $0) }
                }
            case AV_SAMPLE_FMT_S64, AV_SAMPLE_FMT_S64P:
                // Signed 64-bit keeps its top 32 bits.
                data.withMemoryRebound(to: Int64.self, capacity: range.upperBound * samplesPerFrame) { wide in
                    for index in (range.lowerBound * samplesPerFrame)..<(range.upperBound * samplesPerFrame) {
                        let narrowed = Int32(truncatingIfNeeded: wide[index] >> 32)
                        withUnsafeBytes(of: narrowed.littleEndian) { planes[plane].append(contentsOf: $0) }
                    }
                }
            default:
                planes[plane].append(contentsOf: UnsafeBufferPointer(start: data + range.lowerBound * bytesPerFrame, count: range.count * bytesPerFrame))
            }
        }
        frameCount += range.count
    }

    /// The oldest closed buffer, else everything pending as one buffer; nil when empty.
    mutating func takeBuffer() -> SampleBuffer? {
        if !finished.isEmpty { return finished.removeFirst() }
        closeCurrent()
        return finished.isEmpty ? nil : finished.removeFirst()
    }

    private mutating func closeCurrent() {
        guard frameCount > 0, let format else { return }
        finished.append(SampleBuffer(pcmFormat: format, planes: planes, frameCount: frameCount,
                                     presentationTime: MediaTime(value: startPosition, timescale: Int32(format.sampleRate))))
        planes = []
        frameCount = 0
    }
}
