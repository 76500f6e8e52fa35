import CFFmpeg

/// Decodes FLAC frames made by `FLACBlockEncoder` (or any FLAC frame of 16-bit samples) back to
/// interleaved signed 16-bit frames, each block on its own and in any order. A block that does not
/// decode to the frames it should is an error naming what was wrong; the decoder goes on with the
/// next. FFmpeg's decoder: the reference the speaker's own (`FLACFrameDecoder`, without FFmpeg) is
/// checked against in its tests and its fuzz target. Not thread-safe: one decoder per thread.
public final class FLACBlockDecoder {
    /// Frames per second.
    public let sampleRate: Int
    /// Interleaved channels.
    public let channelCount: Int
    private let context: FFmpegCodecContext
    private let frame = FFmpegFrame()
    private let packet = FFmpegPacket()

    /// A decoder for `channelCount` channels at `sampleRate`.
    public init(sampleRate: Int, channelCount: Int) throws(FLACCodecError) {
        try FLACCodecError.checkFormat(sampleRate: sampleRate, channelCount: channelCount)
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        do {
            context = try FFmpegCodecContext(decoding: AV_CODEC_ID_FLAC, sampleRate: sampleRate, channelCount: channelCount)
        } catch {
            switch error {
            case .noDecoder: throw .codecUnavailable("FFmpeg has no FLAC decoder")
            case .ffmpeg(let error): throw FLACCodecError(error)
            }
        }
    }

    /// The samples of `block`, which must hold `frameCount` frames of this decoder's format.
    public func decode(_ block: [UInt8], frameCount: Int) throws(FLACCodecError) -> [Int16] {
        var samples = [Int16](repeating: 0, count: frameCount * channelCount)
        try samples.withUnsafeMutableBufferPointer { pointer throws(FLACCodecError) in try decode(block, into: pointer) }
        return samples
    }

    /// Decodes `block` into `samples`, which it must fill exactly (interleaved, `channelCount` per frame).
    public func decode(_ block: [UInt8], into samples: UnsafeMutableBufferPointer<Int16>) throws(FLACCodecError) {
        let frameCount = samples.count / channelCount
        guard !block.isEmpty else { throw .malformedBlock("an empty block for \(frameCount) frames") }
        guard block.count <= Int(Int32.max) - Int(AV_INPUT_BUFFER_PADDING_SIZE) else { throw .malformedBlock("a block of \(block.count) bytes") }
        // A block that failed leaves nothing behind for the next.
        var isDecoded = false
        defer { if !isDecoded { context.flush() } }
        do {
            packet.unreference()
            try FFmpegError.check(av_new_packet(packet.pointer, Int32(block.count)), "av_new_packet")
            defer { packet.unreference() }
            block.withUnsafeBytes { UnsafeMutableRawPointer(packet.pointer.pointee.data!).copyMemory(from: $0.baseAddress!, byteCount: block.count) }
            try context.send(packet)
            frame.unreference()
            defer { frame.unreference() }
            guard try context.receive(into: frame) else { throw FLACCodecError.malformedBlock("\(block.count) bytes gave no frames, \(frameCount) expected") }
            let raw = frame.pointer.pointee
            guard Int(raw.nb_samples) == frameCount else {
                throw FLACCodecError.malformedBlock("\(block.count) bytes gave \(raw.nb_samples) frames, \(frameCount) expected")
            }
            guard Int(raw.ch_layout.nb_channels) == channelCount, Int(raw.sample_rate) == sampleRate || raw.sample_rate == 0 else {
                throw FLACCodecError.malformedBlock("\(raw.ch_layout.nb_channels) channels at \(raw.sample_rate) Hz, \(channelCount) at \(sampleRate) expected")
            }
            try Self.copy(raw, into: samples, channelCount: channelCount)
            isDecoded = true
        } catch let error as FFmpegError {
            throw FLACCodecError.malformedBlock("\(block.count) bytes for \(frameCount) frames: \(error)")
        } catch let error as FLACCodecError {
            throw error
        } catch {
            throw FLACCodecError.malformedBlock("\(error)")
        }
    }

    /// Interleaves a decoded frame of 16-bit samples, packed or planar, into `samples`.
    private static func copy(_ frame: AVFrame, into samples: UnsafeMutableBufferPointer<Int16>, channelCount: Int) throws(FLACCodecError) {
        let frameCount = Int(frame.nb_samples)
        switch frame.format {
        case AV_SAMPLE_FMT_S16.rawValue:
            UnsafeMutableRawPointer(samples.baseAddress!).copyMemory(from: frame.data.0!, byteCount: frameCount * channelCount * 2)
        case AV_SAMPLE_FMT_S16P.rawValue:
            guard let planes = frame.extended_data else { throw .malformedBlock("a planar frame without planes") }
            for channel in 0..<channelCount {
                let plane = UnsafeRawPointer(planes[channel]!).assumingMemoryBound(to: Int16.self)
                for index in 0..<frameCount { samples[index * channelCount + channel] = plane[index] }
            }
        default:
            let name = av_get_sample_fmt_name(AVSampleFormat(frame.format)).map { String(cString: $0) } ?? "format \(frame.format)"
            throw .malformedBlock("samples of \(name), not 16-bit")
        }
    }
}
