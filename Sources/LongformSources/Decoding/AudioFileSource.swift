import CFFmpeg
import Foundation
import Logging
import LongformCore

/// Decodes one item (a local file or an http(s) URL) into PCM sample buffers of 0.5 to 2 s,
/// gapless: encoder delay and padding are removed wherever the file says how much, so the
/// item yields exactly the frames that were encoded. Seeks are sample-accurate.
///
/// Not thread-safe: use one source from one serial queue at a time.
public final class AudioFileSource: @unchecked Sendable {
    /// The item as the caller named it.
    public let location: String
    /// The format of the buffers it delivers (the decoder's own sample format).
    public private(set) var format: AudioFormat
    /// Tags, duration and artwork.
    public let metadata: AudioMetadata
    /// The exact number of frames the item yields, when the file says so; otherwise an estimate or nil.
    public let expectedFrameCount: Int64?
    /// Whether `expectedFrameCount` is exact (gapless information present or a lossless container).
    public let isFrameCountExact: Bool
    /// The codec's short name (`"flac"`, `"mp3"`…).
    public let codecName: String

    private let preferredBufferFrames: Int
    private let maximumBufferFrames: Int
    private var container: FFmpegFormatContext
    private var decoder: FFmpegCodecContext
    private var streamIndex: Int32
    private let streamTimeBase: AVRational
    /// Frames to cut at the end: the item yields at most this many (iTunSMPB / MP4 edit list).
    private let frameLimit: Int64?
    private let packet = FFmpegPacket()
    private let frame = FFmpegFrame()
    private var isInputFinished = false
    private var isDecoderDrained = false
    /// The item frame index of the next frame to be delivered.
    private var nextFramePosition: Int64 = 0
    /// The stream timestamp of item frame 0, learned from the first decoded frame.
    private var originTimestamp: Int64?
    /// Frames to drop before delivering (the remainder of a seek).
    private var framesToDiscardUntil: Int64 = 0
    private var consecutiveDecodeErrors = 0
    /// Whether reading started at the item's first frame (opened, or sought to frame 0) and no
    /// buffer has been delivered since: an end reached in this state means the item holds no audio.
    private var isAtUnplayedStart = true
    private var pending = PCMAccumulator()
    private let logger = Logger(label: LogLabel.source)

    /// How long a network read may stall before the URL counts as unreachable, unless the caller says.
    public static let networkTimeoutSeconds = 10
    /// How long this source's network reads may stall.
    private let networkTimeout: Int
    /// Ends a network call (an open, a packet's read, a seek) that waits `networkTimeout`, also
    /// while bytes trickle, or that `cancelNetworkReads()` cancels; nil for a local file.
    private let interrupt: FFmpegInterrupt?
    /// Why the input ended before its end (a read that failed or timed out), once it has; the
    /// buffers before it were delivered, and the source then ends as though the item did.
    public private(set) var inputFailure: String?

    /// Opens `location` (a path, a file: URL or an http(s) URL) and reads its format and metadata.
    /// - Parameter preferredBufferDuration: seconds per delivered buffer, clamped to 0.5...2.
    /// - Parameter networkTimeoutSeconds: how long a network read (the opening included) may stall.
    /// - Parameter cancellation: ends the network reads (this opening too) when cancelled from elsewhere.
    public init(location: String, preferredBufferDuration: Double = 1.0, networkTimeoutSeconds: Int = AudioFileSource.networkTimeoutSeconds,
                cancellation: ReadCancellation = ReadCancellation()) throws(SourceError) {
        self.location = location
        networkTimeout = networkTimeoutSeconds
        let target = try Self.resolve(location)
        let interrupt = target.isNetwork ? FFmpegInterrupt(stallSeconds: networkTimeoutSeconds, cancellation: cancellation) : nil
        self.interrupt = interrupt
        let container: FFmpegFormatContext
        do {
            container = try FFmpegFormatContext(location: target.path, networkTimeoutSeconds: networkTimeoutSeconds, interrupt: interrupt)
        } catch {
            throw SourceError(location: location, kind: target.isNetwork ? .unreachable : .unsupported, detail: error.message)
        }
        self.container = container
        let audio = av_find_best_stream(container.pointer, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard audio >= 0, let stream = container.pointer.pointee.streams[Int(audio)] else {
            throw SourceError(location: location, kind: .unsupported, detail: "no audio stream")
        }
        streamIndex = audio
        streamTimeBase = stream.pointee.time_base
        do {
            decoder = try FFmpegCodecContext(stream: stream)
        } catch {
            switch error {
            case .noDecoder(let name): throw SourceError(location: location, kind: .unsupported, detail: "no decoder for codec \(name)")
            case .ffmpeg(let ffmpeg): throw SourceError(location: location, kind: .corrupt, detail: ffmpeg.description)
            }
        }
        codecName = decoder.codecName
        let parameters = stream.pointee.codecpar.pointee
        guard parameters.sample_rate > 0, parameters.ch_layout.nb_channels > 0 else {
            throw SourceError(location: location, kind: .corrupt, detail: "no sample rate or channel count")
        }
        let sampleRate = Int(parameters.sample_rate)
        format = Self.audioFormat(sampleFormat: decoder.pointer.pointee.sample_fmt, sampleRate: sampleRate,
                                  channelCount: Int(parameters.ch_layout.nb_channels),
                                  bitsPerRawSample: Int(decoder.pointer.pointee.bits_per_raw_sample)) ?? AudioFormat(sampleRate: sampleRate, channelCount: Int(parameters.ch_layout.nb_channels))
        let clamped = min(max(preferredBufferDuration, 0.5), 2.0)
        preferredBufferFrames = Int(Double(sampleRate) * clamped)
        maximumBufferFrames = sampleRate * 2

        let length = Self.gaplessLength(container: container, stream: stream, sampleRate: sampleRate, localPath: target.isNetwork ? nil : String(target.path.dropFirst("file:".count)))
        frameLimit = length.limit
        expectedFrameCount = length.frames
        isFrameCountExact = length.isExact
        let duration = length.frames.map { MediaTime(value: $0, timescale: Int32(sampleRate)) } ?? .indefinite
        metadata = AudioMetadata(title: container.tag("title", stream: stream),
                                 artist: container.tag("artist", stream: stream) ?? container.tag("album_artist", stream: stream),
                                 album: container.tag("album", stream: stream),
                                 duration: duration,
                                 artwork: Self.artwork(in: container))
        logger.debug("opened \(location): \(codecName) \(format), \(length.frames.map(String.init) ?? "unknown") frames\(length.isExact ? " (exact)" : "")")
    }

    /// The buffers' sample rate.
    public var sampleRate: Int { format.sampleRate }

    /// Ends the network read under way, and every later one, at once (safe from any thread): the
    /// source then ends as though its input had (`inputFailure` "cancelled"). A local file's
    /// reads do not block, and are not affected.
    public func cancelNetworkReads() {
        interrupt?.cancellation.cancel()
    }

    /// The next buffer of 0.5 to 2 s (shorter at the end, or when `maximumDuration` asks for less:
    /// a start needs only its preroll decoded), or nil at the end of the item. It may exceed
    /// `maximumDuration` by up to one decoded frame. A damaged stretch in the middle is skipped
    /// with a warning; a truncated file ends early.
    public func nextSampleBuffer(maximumDuration: Double? = nil) throws(SourceError) -> SampleBuffer? {
        let wantedFrames = maximumDuration.map { min(preferredBufferFrames, max(1, Int(Double(sampleRate) * $0))) } ?? preferredBufferFrames
        while pending.frameCount < wantedFrames && !pending.hasFinishedBuffer {
            guard try decodeFrame() else { break }
            appendDecodedFrame()
            if pending.frameCount >= maximumBufferFrames { break }
        }
        guard let buffer = pending.takeBuffer() else {
            // A file that decodes to nothing from its start is damaged (or holds no audio), not a
            // silent success: the player names it as failed.
            if isAtUnplayedStart, let inputFailure {
                throw SourceError(location: location, kind: Self.isNetworkLocation(location) ? .unreachable : .corrupt,
                                  detail: "the input ended before any audio could be decoded (\(inputFailure))")
            }
            if isAtUnplayedStart { throw SourceError(location: location, kind: .corrupt, detail: "no audio could be decoded from it") }
            return nil
        }
        isAtUnplayedStart = false
        return buffer
    }

    /// Moves so that the next buffer starts exactly at item frame `target`.
    public func seek(toFrame target: Int64) throws(SourceError) {
        pending = PCMAccumulator()
        let target = max(0, target)
        isAtUnplayedStart = target == 0
        if target == 0 || originTimestamp == nil {
            // Reopening is the one way to get FFmpeg's start-of-file gapless trim applied again.
            try reopen()
            if target == 0 { return }
            // Decode the first frame to learn where item frame 0 sits on the stream's timeline.
            guard try decodeFrame() else { framesToDiscardUntil = target; return }
            appendDecodedFrame()
            pending = PCMAccumulator()
        }
        guard let origin = originTimestamp else { return }
        // Start decoding a little early so that lossy decoders have converged by the target; a
        // lossless decoder is exact from any frame, and needs only to land before the target.
        var leadIn: Int64 = decoder.isLossless ? 4096 : Int64(sampleRate) / 2
        while true {
            let startFrame = max(0, target - leadIn)
            let timestamp = origin + av_rescale_q(startFrame, AVRational(num: 1, den: Int32(sampleRate)), streamTimeBase)
            do {
                try container.seek(stream: streamIndex, toTimestamp: timestamp)
            } catch {
                // Not seekable (a pipe or a stream without an index): decode from the start instead.
                try reopen()
                framesToDiscardUntil = target
                return
            }
            decoder.flush()
            isInputFinished = false
            isDecoderDrained = false
            inputFailure = nil
            framesToDiscardUntil = target
            nextFramePosition = -1 // learned from the next frame's timestamp
            guard try decodeFrame() else { return }
            if nextFramePosition <= target || startFrame == 0 {
                appendDecodedFrame()
                return
            }
            // The demuxer landed after the target: go further back.
            leadIn *= 4
        }
    }

    /// Moves so that the next buffer starts at `offset` into the item (rounded to the nearest frame).
    public func seek(to offset: MediaTime) throws(SourceError) {
        try seek(toFrame: offset.convertScale(Int32(sampleRate), method: .roundHalfAwayFromZero).value)
    }

    // MARK: - Decoding

    /// Decodes the next frame into `frame`; false at the end of the item.
    private func decodeFrame() throws(SourceError) -> Bool {
        while true {
            do {
                frame.unreference()
                if try decoder.receive(into: frame) {
                    consecutiveDecodeErrors = 0
                    if originTimestamp == nil {
                        originTimestamp = bestTimestamp() ?? 0
                    }
                    if nextFramePosition < 0 {
                        nextFramePosition = bestTimestamp().map { av_rescale_q($0 - (originTimestamp ?? 0), streamTimeBase, AVRational(num: 1, den: Int32(sampleRate))) } ?? framesToDiscardUntil
                    }
                    return true
                }
            } catch {
                try noteDecodeError(error)
                continue
            }
            if isDecoderDrained { return false }
            if isInputFinished {
                isDecoderDrained = true
                try? decoder.send(nil)
                continue
            }
            packet.unreference()
            do {
                if try !container.readPacket(into: packet) { isInputFinished = true; continue }
            } catch {
                logger.warning("\(location): input ends early (\(error.message)); playing what was decoded")
                inputFailure = error.message
                isInputFinished = true
                continue
            }
            guard packet.pointer.pointee.stream_index == streamIndex else { continue }
            do {
                try decoder.send(packet)
            } catch {
                try noteDecodeError(error)
            }
        }
    }

    private func noteDecodeError(_ error: FFmpegError) throws(SourceError) {
        consecutiveDecodeErrors += 1
        logger.warning("\(location): skipping damaged data at frame \(nextFramePosition) (\(error.message))")
        if consecutiveDecodeErrors > 100 {
            throw SourceError(location: location, kind: .corrupt, detail: error.message)
        }
    }

    private func bestTimestamp() -> Int64? {
        let timestamp = frame.pointer.pointee.best_effort_timestamp
        if timestamp != longform_av_nopts_value() { return timestamp }
        let pts = frame.pointer.pointee.pts
        return pts == longform_av_nopts_value() ? nil : pts
    }

    /// Appends the decoded frame to the pending buffer, cutting what lies before a seek target
    /// or beyond the item's gapless end.
    private func appendDecodedFrame() {
        let decoded = frame.pointer.pointee
        let count = Int64(decoded.nb_samples)
        guard count > 0, let frameFormat = Self.audioFormat(sampleFormat: AVSampleFormat(rawValue: decoded.format), sampleRate: Int(decoded.sample_rate),
                                                            channelCount: Int(decoded.ch_layout.nb_channels), bitsPerRawSample: format.bitsPerSample) else { return }
        let start = nextFramePosition
        nextFramePosition += count
        var first = max(0, framesToDiscardUntil - start)
        var end = count
        if let frameLimit { end = min(end, frameLimit - start) }
        first = min(first, count)
        guard end > first else { return }
        if frameFormat != pending.format && pending.format != nil {
            logger.info("\(location): format changes to \(frameFormat)")
        }
        pending.append(frame: frame.pointer, format: frameFormat, range: Int(first)..<Int(end), position: start + first, sourceFormat: AVSampleFormat(rawValue: decoded.format))
        format = pending.format ?? format
    }

    private func reopen() throws(SourceError) {
        let target = try Self.resolve(location)
        do {
            container = try FFmpegFormatContext(location: target.path, networkTimeoutSeconds: networkTimeout, interrupt: interrupt)
            guard let stream = container.pointer.pointee.streams[Int(streamIndex)] else { throw SourceError(location: location, kind: .corrupt, detail: "stream vanished") }
            decoder = try FFmpegCodecContext(stream: stream)
        } catch let error as FFmpegError {
            throw SourceError(location: location, kind: target.isNetwork ? .unreachable : .corrupt, detail: error.message)
        } catch let error as SourceError {
            throw error
        } catch {
            throw SourceError(location: location, kind: .corrupt, detail: "\(error)")
        }
        isInputFinished = false
        isDecoderDrained = false
        inputFailure = nil
        nextFramePosition = 0
        framesToDiscardUntil = 0
    }
}

// MARK: - Opening

extension AudioFileSource {
    struct ResolvedLocation {
        var path: String
        var isNetwork: Bool
    }

    /// Whether `location` is an http(s) URL, read over the network, rather than a local file.
    public static func isNetworkLocation(_ location: String) -> Bool {
        let lowered = location.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    /// Checks a local path before FFmpeg sees it, so that "missing" and "empty" are named as such.
    static func resolve(_ location: String) throws(SourceError) -> ResolvedLocation {
        if isNetworkLocation(location) { return ResolvedLocation(path: location, isNetwork: true) }
        var path = location
        if location.lowercased().hasPrefix("file://") {
            guard let url = URL(string: location), url.isFileURL else {
                throw SourceError(location: location, kind: .notFound, detail: "malformed file URL")
            }
            path = url.path
        } else if let colon = location.firstIndex(of: ":"), location[..<colon].allSatisfy({ $0.isLetter }), location[..<colon].count > 1 {
            throw SourceError(location: location, kind: .unsupportedScheme, detail: "only files and http(s) URLs play")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw SourceError(location: location, kind: .notFound, detail: "no such file")
        }
        if isDirectory.boolValue { throw SourceError(location: location, kind: .unreadable, detail: "a directory") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw SourceError(location: location, kind: .unreadable, detail: "permission denied")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        if size == 0 { throw SourceError(location: location, kind: .empty, detail: "0 bytes") }
        // "file:" keeps FFmpeg from reading a colon in the name as a protocol.
        return ResolvedLocation(path: "file:" + path, isNetwork: false)
    }

    /// The number of frames the item yields, and the cut to apply at its end.
    static func gaplessLength(container: FFmpegFormatContext, stream: UnsafeMutablePointer<AVStream>, sampleRate: Int, localPath: String?) -> (frames: Int64?, limit: Int64?, isExact: Bool) {
        let toFrames = AVRational(num: 1, den: Int32(sampleRate))
        if container.formatName == "mp3", let localPath, let info = MP3GaplessInfo.read(path: localPath) {
            // FFmpeg trims by the same tag; the limit only guards against a decoder that did not.
            return (info.validFrameCount, info.validFrameCount, true)
        }
        let isMP4 = container.formatName.contains("mp4") || container.formatName.contains("mov")
        if isMP4 {
            // iTunes writes " 00000000 PRIMING PADDING VALIDFRAMES ..." (hex): the valid length.
            if let smpb = container.tag("iTunSMPB", stream: stream) {
                let fields = smpb.split(separator: " ")
                if fields.count >= 4, let valid = Int64(fields[3], radix: 16), valid > 0 {
                    return (valid, valid, true)
                }
            }
            // Otherwise the edit list: FFmpeg trims the stream's duration to the edit's length
            // but still decodes the padding of the last packet. Cut it.
            if stream.pointee.duration > 0 && stream.pointee.duration != longform_av_nopts_value() {
                let frames = av_rescale_q(stream.pointee.duration, stream.pointee.time_base, toFrames)
                return (frames, frames, true)
            }
        }
        if stream.pointee.duration > 0 && stream.pointee.duration != longform_av_nopts_value() {
            let frames = av_rescale_q(stream.pointee.duration, stream.pointee.time_base, toFrames)
            // Lossless containers count samples; Ogg's last granule position is the exact end.
            let codec = String(cString: avcodec_get_name(stream.pointee.codecpar.pointee.codec_id))
            let exact = ["flac", "alac", "wav", "aiff", "pcm"].contains { container.formatName.contains($0) || codec.contains($0) } || container.formatName == "ogg"
            return (frames, nil, exact)
        }
        let total = container.pointer.pointee.duration
        if total > 0 && total != longform_av_nopts_value() {
            return (av_rescale_q(total, AVRational(num: 1, den: 1_000_000), toFrames), nil, false)
        }
        return (nil, nil, false)
    }

    /// The first attached picture (cover art), if the file embeds one.
    static func artwork(in container: FFmpegFormatContext) -> AudioMetadata.Artwork? {
        for stream in container.streams where (stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC) != 0 {
            let picture = stream.pointee.attached_pic
            guard picture.size > 0, let data = picture.data else { continue }
            let bytes = Array(UnsafeBufferPointer(start: data, count: Int(picture.size)))
            let mime = bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) ? "image/png" : "image/jpeg"
            return AudioMetadata.Artwork(data: bytes, mimeType: mime)
        }
        return nil
    }

    /// Our format for an FFmpeg sample format; nil for formats we do not carry.
    static func audioFormat(sampleFormat: AVSampleFormat, sampleRate: Int, channelCount: Int, bitsPerRawSample: Int) -> AudioFormat? {
        let (sample, interleaved): (SampleFormat, Bool)
        switch sampleFormat {
        case AV_SAMPLE_FMT_U8, AV_SAMPLE_FMT_S16: (sample, interleaved) = (.int16, true)
        case AV_SAMPLE_FMT_U8P, AV_SAMPLE_FMT_S16P: (sample, interleaved) = (.int16, false)
        case AV_SAMPLE_FMT_S32, AV_SAMPLE_FMT_S64: (sample, interleaved) = (.int32, true)
        case AV_SAMPLE_FMT_S32P, AV_SAMPLE_FMT_S64P: (sample, interleaved) = (.int32, false)
        case AV_SAMPLE_FMT_FLT: (sample, interleaved) = (.float32, true)
        case AV_SAMPLE_FMT_FLTP: (sample, interleaved) = (.float32, false)
        case AV_SAMPLE_FMT_DBL: (sample, interleaved) = (.float64, true)
        case AV_SAMPLE_FMT_DBLP: (sample, interleaved) = (.float64, false)
        default: return nil
        }
        let bits = sample == .int32 && bitsPerRawSample > 0 && bitsPerRawSample < 32 ? bitsPerRawSample : sample.bytesPerSample * 8
        return AudioFormat(sampleRate: sampleRate, channelCount: channelCount, sampleFormat: sample, isInterleaved: interleaved || channelCount == 1, bitsPerSample: bits)
    }
}
