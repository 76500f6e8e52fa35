import CFFmpeg

/// Owns an opened decoder (`AVCodecContext`) and frees it in `deinit`.
final class FFmpegCodecContext {
    private(set) var pointer: UnsafeMutablePointer<AVCodecContext>

    /// Opens the decoder for `stream`'s codec parameters.
    init(stream: UnsafeMutablePointer<AVStream>) throws(SourceDecoderError) {
        let parameters = stream.pointee.codecpar!
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw .noDecoder(String(cString: avcodec_get_name(parameters.pointee.codec_id)))
        }
        guard let context = avcodec_alloc_context3(codec) else { throw .ffmpeg(FFmpegError(code: -12, operation: "avcodec_alloc_context3")) }
        pointer = context
        do {
            try FFmpegError.check(avcodec_parameters_to_context(context, parameters), "avcodec_parameters_to_context")
            context.pointee.pkt_timebase = stream.pointee.time_base
            try FFmpegError.check(avcodec_open2(context, codec, nil), "avcodec_open2")
        } catch {
            throw .ffmpeg(error)
        }
    }

    /// Opens the decoder for `codecID` on a stream with no container: `sampleRate` and
    /// `channelCount` from the caller (a FLAC block carries its own in each frame header).
    /// Checksums are checked, and a mismatch fails the packet.
    init(decoding codecID: AVCodecID, sampleRate: Int, channelCount: Int) throws(SourceDecoderError) {
        guard let codec = avcodec_find_decoder(codecID) else { throw .noDecoder(String(cString: avcodec_get_name(codecID))) }
        guard let context = avcodec_alloc_context3(codec) else { throw .ffmpeg(FFmpegError(code: -12, operation: "avcodec_alloc_context3")) }
        pointer = context
        context.pointee.sample_rate = Int32(sampleRate)
        av_channel_layout_default(&context.pointee.ch_layout, Int32(channelCount))
        // A frame whose checksum fails is an error, not samples: a speaker plays no damaged audio.
        context.pointee.err_recognition |= AV_EF_CRCCHECK | AV_EF_EXPLODE
        do {
            try FFmpegError.check(avcodec_open2(context, codec, nil), "avcodec_open2")
        } catch {
            throw .ffmpeg(error)
        }
    }

    deinit {
        var owned: UnsafeMutablePointer<AVCodecContext>? = pointer
        avcodec_free_context(&owned)
    }

    /// The codec's short name.
    var codecName: String { String(cString: avcodec_get_name(pointer.pointee.codec_id)) }

    /// Whether the codec is lossless (FLAC, ALAC, PCM…): its decoder is exact from any frame.
    var isLossless: Bool {
        guard let descriptor = avcodec_descriptor_get(pointer.pointee.codec_id) else { return false }
        return descriptor.pointee.props & AV_CODEC_PROP_LOSSLESS != 0
    }

    /// Sends a packet, or nil to drain the decoder at the end of the input.
    func send(_ packet: FFmpegPacket?) throws(FFmpegError) {
        try FFmpegError.check(avcodec_send_packet(pointer, packet?.pointer), "avcodec_send_packet")
    }

    /// Receives the next decoded frame; false when the decoder needs input or is drained.
    func receive(into frame: FFmpegFrame) throws(FFmpegError) -> Bool {
        let status = avcodec_receive_frame(pointer, frame.pointer)
        if status == longform_averror_eagain() || status == longform_averror_eof() { return false }
        try FFmpegError.check(status, "avcodec_receive_frame")
        return true
    }

    /// Drops the decoder's state after a seek.
    func flush() { avcodec_flush_buffers(pointer) }
}

/// Why a decoder could not be opened.
enum SourceDecoderError: Error {
    case noDecoder(String)
    case ffmpeg(FFmpegError)
}

/// Owns an `AVPacket`.
final class FFmpegPacket {
    let pointer: UnsafeMutablePointer<AVPacket>
    init() { pointer = av_packet_alloc() }
    deinit {
        var owned: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&owned)
    }
    /// Releases the packet's data so the packet can be reused.
    func unreference() { av_packet_unref(pointer) }
}

/// Owns an `AVFrame`.
final class FFmpegFrame {
    let pointer: UnsafeMutablePointer<AVFrame>
    init() { pointer = av_frame_alloc() }
    deinit {
        var owned: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&owned)
    }
    /// Releases the frame's data so the frame can be reused.
    func unreference() { av_frame_unref(pointer) }
}
