import CFFmpeg

/// Owns an opened FLAC encoder (`AVCodecContext`) and frees it in `deinit`.
final class FFmpegEncoderContext {
    let pointer: UnsafeMutablePointer<AVCodecContext>

    /// Opens FFmpeg's FLAC encoder for packed 16-bit frames, `blockFrameCount` a block.
    init(sampleRate: Int, channelCount: Int, blockFrameCount: Int, compressionLevel: Int) throws(FLACCodecError) {
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_FLAC) else { throw .codecUnavailable("FFmpeg has no FLAC encoder") }
        guard let context = avcodec_alloc_context3(codec) else { throw .ffmpeg(operation: "avcodec_alloc_context3", message: "out of memory") }
        pointer = context
        context.pointee.sample_fmt = AV_SAMPLE_FMT_S16
        context.pointee.sample_rate = Int32(sampleRate)
        av_channel_layout_default(&context.pointee.ch_layout, Int32(channelCount))
        context.pointee.frame_size = Int32(blockFrameCount)
        context.pointee.compression_level = Int32(compressionLevel)
        do {
            try FFmpegError.check(avcodec_open2(context, codec, nil), "avcodec_open2 (FLAC encoder)")
        } catch {
            throw FLACCodecError(error)
        }
    }

    deinit {
        var owned: UnsafeMutablePointer<AVCodecContext>? = pointer
        avcodec_free_context(&owned)
    }
}
