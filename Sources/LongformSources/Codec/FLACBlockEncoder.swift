import CFFmpeg

/// Encodes blocks of interleaved signed 16-bit frames into FLAC frames, each of which decodes on
/// its own (a speaker's `FLACFrameDecoder`; FFmpeg's, `FLACBlockDecoder`), so that a speaker can
/// keep them compressed and decode any of them first. Blocks hold `blockFrameCount` frames; a shorter one (at a flush, the end of a stream) is
/// allowed at any time. Not thread-safe: one encoder per sending thread.
public final class FLACBlockEncoder {
    /// Frames per full block.
    public let blockFrameCount: Int
    /// Frames per second.
    public let sampleRate: Int
    /// Interleaved channels.
    public let channelCount: Int
    /// FLAC's compression level (0 fastest … 12 smallest).
    public let compressionLevel: Int
    /// The encoder for full blocks. FFmpeg's FLAC encoder takes one short block only, as its last:
    /// a short block goes to an encoder of its own (see `encode(_:)`).
    private let context: FFmpegEncoderContext
    private let frame = FFmpegFrame()
    private let packet = FFmpegPacket()

    /// An encoder for `channelCount` channels at `sampleRate`, `blockFrameCount` frames a block
    /// (16 to 65,535; 4,096 is FLAC's usual for 44.1 and 48 kHz).
    public init(sampleRate: Int, channelCount: Int, blockFrameCount: Int = 4_096, compressionLevel: Int = 5) throws(FLACCodecError) {
        try FLACCodecError.checkFormat(sampleRate: sampleRate, channelCount: channelCount)
        guard (16...65_535).contains(blockFrameCount) else { throw .unsupportedFormat("blocks of \(blockFrameCount) frames (FLAC: 16 to 65,535)") }
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.blockFrameCount = blockFrameCount
        self.compressionLevel = compressionLevel
        context = try FFmpegEncoderContext(sampleRate: sampleRate, channelCount: channelCount, blockFrameCount: blockFrameCount, compressionLevel: compressionLevel)
    }

    /// One FLAC frame holding `samples` (interleaved, `channelCount` per frame; 1 to
    /// `blockFrameCount` frames).
    public func encode(_ samples: UnsafeBufferPointer<Int16>) throws(FLACCodecError) -> [UInt8] {
        guard !samples.isEmpty, samples.count % channelCount == 0 else {
            throw .invalidBlock("\(samples.count) samples are not whole frames of \(channelCount) channels")
        }
        let frameCount = samples.count / channelCount
        guard frameCount <= blockFrameCount else { throw .invalidBlock("\(frameCount) frames, more than a block's \(blockFrameCount)") }
        if frameCount < blockFrameCount {
            // A short block is its encoder's last: one made for it.
            let shortContext = try FFmpegEncoderContext(sampleRate: sampleRate, channelCount: channelCount, blockFrameCount: blockFrameCount,
                                                         compressionLevel: compressionLevel)
            return try encode(samples, frameCount: frameCount, with: shortContext)
        }
        return try encode(samples, frameCount: frameCount, with: context)
    }

    /// One FLAC frame holding `samples`; see `encode(_:)`.
    public func encode(_ samples: [Int16]) throws(FLACCodecError) -> [UInt8] {
        try samples.withUnsafeBufferPointer { pointer throws(FLACCodecError) in try encode(pointer) }
    }

    private func encode(_ samples: UnsafeBufferPointer<Int16>, frameCount: Int, with context: FFmpegEncoderContext) throws(FLACCodecError) -> [UInt8] {
        do {
            frame.unreference()
            let raw = frame.pointer
            raw.pointee.format = AV_SAMPLE_FMT_S16.rawValue
            raw.pointee.sample_rate = Int32(sampleRate)
            raw.pointee.nb_samples = Int32(frameCount)
            try FFmpegError.check(av_channel_layout_copy(&raw.pointee.ch_layout, &context.pointer.pointee.ch_layout), "av_channel_layout_copy")
            try FFmpegError.check(av_frame_get_buffer(raw, 0), "av_frame_get_buffer")
            // Packed 16-bit: the interleaved samples as they are.
            UnsafeMutableRawPointer(raw.pointee.data.0!).copyMemory(from: samples.baseAddress!, byteCount: samples.count * 2)
            try FFmpegError.check(avcodec_send_frame(context.pointer, raw), "avcodec_send_frame")
            packet.unreference()
            // The FLAC encoder hands back each frame's packet at once.
            try FFmpegError.check(avcodec_receive_packet(context.pointer, packet.pointer), "avcodec_receive_packet")
            defer { packet.unreference() }
            return [UInt8](UnsafeBufferPointer(start: packet.pointer.pointee.data, count: Int(packet.pointer.pointee.size)))
        } catch {
            throw FLACCodecError(error)
        }
    }
}
