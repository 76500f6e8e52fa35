import CFFmpeg

/// Owns an opened `AVFormatContext` (a demuxer on a file or URL) and closes it in `deinit`.
final class FFmpegFormatContext {
    private(set) var pointer: UnsafeMutablePointer<AVFormatContext>
    /// Asked by FFmpeg while it waits on the network; kept alive as long as the context.
    private let interrupt: FFmpegInterrupt?

    /// Opens `location` (a path or an http(s) URL) and reads its stream information.
    /// Network reads time out after `networkTimeoutSeconds`, so that an unreachable URL fails instead of stalling.
    /// With an `interrupt`, a read also ends when it says so (cancelled, or no packet for its stall limit).
    init(location: String, networkTimeoutSeconds: Int, interrupt: FFmpegInterrupt? = nil) throws(FFmpegError) {
        self.interrupt = interrupt
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        if let interrupt {
            guard let allocated = avformat_alloc_context() else { throw FFmpegError(code: -1, operation: "avformat_alloc_context") }
            allocated.pointee.interrupt_callback = AVIOInterruptCB(callback: FFmpegInterrupt.callback, opaque: Unmanaged.passUnretained(interrupt).toOpaque())
            interrupt.noteProgress()
            // avformat_open_input frees it on failure.
            context = allocated
        }
        var options: OpaquePointer? = nil
        let microseconds = String(networkTimeoutSeconds * 1_000_000)
        av_dict_set(&options, "rw_timeout", microseconds, 0)
        av_dict_set(&options, "timeout", microseconds, 0)
        av_dict_set(&options, "reconnect", "1", 0)
        defer { av_dict_free(&options) }
        try FFmpegError.check(avformat_open_input(&context, location, nil, &options), "avformat_open_input")
        guard let context else { throw FFmpegError(code: -1, operation: "avformat_open_input") }
        pointer = context
        let status = avformat_find_stream_info(context, nil)
        if status < 0 {
            var owned: UnsafeMutablePointer<AVFormatContext>? = context
            avformat_close_input(&owned)
            throw FFmpegError(code: status, operation: "avformat_find_stream_info")
        }
    }

    deinit {
        var owned: UnsafeMutablePointer<AVFormatContext>? = pointer
        avformat_close_input(&owned)
    }

    /// The demuxer's short name (`"mov,mp4,m4a,3gp,3g2,mj2"`, `"flac"`…).
    var formatName: String { String(cString: pointer.pointee.iformat.pointee.name) }

    /// The streams, as FFmpeg lists them.
    var streams: [UnsafeMutablePointer<AVStream>] {
        (0..<Int(pointer.pointee.nb_streams)).compactMap { pointer.pointee.streams[$0] }
    }

    /// The value of a metadata tag on the container or, failing that, on `stream`.
    func tag(_ key: String, stream: UnsafeMutablePointer<AVStream>?) -> String? {
        for dictionary in [pointer.pointee.metadata, stream?.pointee.metadata] {
            if let entry = av_dict_get(dictionary, key, nil, 0), let value = entry.pointee.value {
                let text = String(cString: value)
                if !text.isEmpty { return text }
            }
        }
        return nil
    }

    /// Reads the next packet into `packet`; false at the end of the input.
    func readPacket(into packet: FFmpegPacket) throws(FFmpegError) -> Bool {
        // The stall limit counts from here: the source may have waited long before this read.
        interrupt?.noteProgress()
        let status = av_read_frame(pointer, packet.pointer)
        if status == longform_averror_eof() { return false }
        if status < 0, let reason = interrupt?.reason { throw FFmpegError(code: status, operation: "av_read_frame", reason: reason) }
        try FFmpegError.check(status, "av_read_frame")
        return true
    }

    /// Why the network reads were interrupted, if they were.
    var interruptReason: String? { interrupt?.reason }

    /// Seeks `stream` to the last keyframe at or before `timestamp` (in the stream's time base).
    func seek(stream index: Int32, toTimestamp timestamp: Int64) throws(FFmpegError) {
        interrupt?.noteProgress()
        try FFmpegError.check(av_seek_frame(pointer, index, timestamp, AVSEEK_FLAG_BACKWARD), "av_seek_frame")
    }
}
