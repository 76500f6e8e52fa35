import LongformSpeakerProtocol

/// The heart of `longform speaker`, without I/O: what the sender's messages do to the buffer and
/// the anchor, and which samples the output plays at a given time. The connection feeds it
/// messages and clock replies and sends the actions it returns; the output thread asks it to
/// render. Like swift-nio's state machines, it is a value type whose event methods return what
/// to do, so that every rule here is tested without sockets or threads.
public struct SpeakerSession: Sendable {
    /// Which of the stream's channels this speaker plays.
    public enum ChannelSelection: String, Sendable, CaseIterable {
        /// All of them.
        case both
        /// The first only, in the output's first channel (the other channels silent).
        case left
        /// The second only, in the output's second channel.
        case right
    }

    /// What a speaker is.
    public struct Configuration: Sendable {
        /// Its name, sent in `welcome`.
        public var name: String
        /// How much audio it holds, in seconds.
        public var bufferSeconds: Double
        /// Which channels it plays.
        public var channels: ChannelSelection
        /// Added to its measured output latency: for an amplifier or a TV it cannot measure (ns).
        public var extraDelay: UInt64
        /// A jump instead of a continuation when the output is further than this from where the
        /// anchor says it should be (seconds): at a start, after a gap, after a new anchor.
        public var resyncThreshold: Double
        /// The rate the output plays at: a stream at another rate is refused (no resampling yet).
        public var outputSampleRate: Int?
        /// A flush must leave this much after the next frame handed to the output (seconds): the
        /// time its answer and the resent audio take to come.
        public var flushMargin: Double
        /// The buffer never takes more memory than this, whatever the format and the seconds.
        public var maximumBufferBytes: Int
        /// Whether the output plays the stream's frames unchanged, bit for bit: it keeps to the
        /// timeline by skipping or repeating whole frames once surely a frame off (within a frame,
        /// 23 µs at 44.1 kHz, plus the clock estimate's uncertainty), not by resampling (within a
        /// twentieth of a frame).
        public var isBitExact: Bool

        /// A configuration.
        public init(name: String, bufferSeconds: Double = 180, channels: ChannelSelection = .both, extraDelay: UInt64 = 0,
                    resyncThreshold: Double = 0.002, outputSampleRate: Int? = nil, flushMargin: Double = 0.05,
                    maximumBufferBytes: Int = 256 << 20, isBitExact: Bool = false) {
            self.name = name
            self.bufferSeconds = bufferSeconds
            self.channels = channels
            self.extraDelay = extraDelay
            self.resyncThreshold = resyncThreshold
            self.outputSampleRate = outputSampleRate
            self.flushMargin = flushMargin
            self.maximumBufferBytes = maximumBufferBytes
            self.isBitExact = isBitExact
        }
    }

    /// What the connection should do.
    public enum Action: Sendable, Equatable {
        /// Send this message to the sender.
        case send(SpeakerMessage)
        /// Close the connection, logging the reason (the buffer is kept).
        case close(reason: String)
    }

    /// The configuration.
    public let configuration: Configuration
    /// The clock estimate.
    public private(set) var clock = NetworkClockEstimator()
    /// How far a sender has set the session up: a hello, then a format.
    public enum Stage: Sendable {
        /// No sender has said hello: every message but a hello closes the connection.
        case awaitingHello
        /// A sender said hello (its session's id) and gave no format yet: audio is refused.
        case greeted(sessionID: [UInt8])
        /// The stream's format is known, and its audio goes into the buffer, sized for it. A new
        /// session keeps the format and empties the buffer.
        case streaming(sessionID: [UInt8], format: AudioStreamFormat, buffer: SpeakerBuffer)
    }

    /// How far a sender has set the session up.
    public private(set) var stage = Stage.awaitingHello
    /// The current session's id, once a sender said hello.
    public var sessionID: [UInt8]? {
        switch stage {
        case .awaitingHello: nil
        case .greeted(let id), .streaming(let id, _, _): id
        }
    }
    /// The stream's format, once given.
    public var format: AudioStreamFormat? {
        if case .streaming(_, let format, _) = stage { format } else { nil }
    }
    /// The audio held, once a format is given.
    public var buffer: SpeakerBuffer? {
        if case .streaming(_, _, let buffer) = stage { buffer } else { nil }
    }
    /// The anchor the output follows.
    public private(set) var anchor: RateAnchor?
    /// An anchor that takes over at its network time (a pause or re-anchor while playing).
    public private(set) var pendingAnchor: RateAnchor?
    /// Volume: this speaker's and its group's.
    public private(set) var volume: (speaker: Float, group: Float) = (1, 1)
    /// What plays, as the sender said.
    public private(set) var metadata: (title: String, artist: String, album: String)?
    /// The cover art of what plays, as the sender last sent it (nil: none).
    public private(set) var artwork: (mimeType: String, data: [UInt8])?
    /// Where the output reads, in media frames (fractional while it corrects drift); nil until it has started.
    public private(set) var position: Double?
    /// The anchor whose timeline `position` follows: the output goes on from `position` (its
    /// drift corrected) only under that anchor or one that continues it; under another it starts
    /// at the new anchor's frame. (Held by a pause at F, a play anchor from F + 70 was chased from F
    /// at 1,000 ppm for a second and a half.)
    private var positionAnchor: RateAnchor?
    /// The next media frame the output is handed; nil until it has started.
    public var nextFrame: Int64? { position.map { Int64($0.rounded(.down)) } }
    /// Frames of audio held from where the output reads next, while it plays or is about to (an
    /// anchor at rate > 0); nil otherwise (what it renders then is silence, which a change takes
    /// back). A rewindable output renders no further than this, so that it does not render as
    /// silence the audio still coming in a fill and have to take it back frame by frame.
    public var playableFrameCount: Int64? {
        guard let anchor, anchor.rate > 0, let buffer, pendingAnchor.map({ $0.rate > 0 }) ?? true else { return nil }
        return max(0, buffer.endFrame - (nextFrame ?? anchor.mediaFrame))
    }
    /// The first media frame a change can still reach: for an output that takes back what it
    /// holds (renders with an `OutputPlacement`), the frame at its first changeable frame, as of
    /// the last `changeableOutputFrame` set (in silence before a start, the start's frame);
    /// otherwise the next frame it is handed.
    public var firstChangeableFrame: Int64? {
        // Not the end of what the output holds: a sender skips what a playing speaker says it
        // can no longer change, and a start rendered seconds ahead before its audio came (silence
        // up to the anchor's moment) once lost 2 s that way.
        if let frame = changeableOutputFrame, let position = rendered.firstPosition(fromOutputFrame: frame) { return Int64(position.rounded(.down)) }
        return nextFrame
    }
    /// The first output frame the output can still change, as its owner last read it (nil: an
    /// output that cannot take anything back). Set before each message, so that a flush is
    /// judged, and a status reported, against what the output can change now.
    public var changeableOutputFrame: Int64?
    /// How long the output takes to play a frame on the speaker's clock (ns), as its route measures
    /// its device's rate; nil: the nominal rate. Set before each render, as `changeableOutputFrame`:
    /// a device 200 ppm off the speaker's clock heard the second half of a 1 s block 100 µs off
    /// where the nominal rate put it.
    public var outputFrameDuration: Double?
    /// Whether the output plays: its clock says which frame is heard when. Set before each message,
    /// as `changeableOutputFrame`. An output still starting (a PulseAudio stream can take a second
    /// or two) would hear a start's first frames late: the speaker is not ready until it plays.
    /// Once it plays, what it holds is rendered again from its first changeable frame: it was
    /// placed by a clock that did not run (every frame's time long past), so an anchor that came
    /// meanwhile found no frame of it to rewind, and a room started up to 1.8 s late.
    /// Where it read is forgotten too, so that it starts again from where the anchor says: a room
    /// whose stream was opened again came back 1.5 ms off the others (restored to where it read
    /// before, within the resync threshold) and was pulled into step at 1,000 ppm over 2 s.
    public var isOutputRunning = true {
        didSet {
            guard isOutputRunning && !oldValue else { return }
            forgetOutput()
            position = nil
            drift.reset()
        }
    }
    /// Whether the speaker can play a frame at the time an anchor gives: its clock is good and its
    /// output plays. A sender starts a group once every speaker is (see `status()`).
    public var isReadyToPlay: Bool { clock.isGood && isOutputRunning }
    /// The output's read rate over the stream's rate, minus 1: the drift correction now.
    public var rateCorrection: Double { drift.rateCorrection }
    /// The last anchor the output started after its moment, and how many of the frames it held
    /// from the anchor's frame on were not played (the anchor, or the clock, came too late for
    /// them): the output stays in step and starts where the timeline is, which the log says.
    public private(set) var lateStart: (anchor: RateAnchor, skippedFrames: Int64)?
    /// Frames a bit-exact output skipped or repeated to keep to the timeline (see `Configuration.isBitExact`).
    public private(set) var slippedFrames = 0
    /// The drift correction between the output's clock and the network's.
    private var drift = DriftCorrector()
    private var scratch: [Float] = []
    /// What a rewindable output holds and has not played (empty for other outputs).
    private var rendered = RenderedBlocks()
    /// The media frame from which what the output holds is stale until audio for it comes (a
    /// flush's resent audio, or audio the buffer lacked when it rendered).
    private var staleFrom: Int64?
    /// The output frame from which the output should render again (`takeRewindRequest`).
    private var rewindRequest: Int64?

    /// A speaker with nothing buffered.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    // MARK: - Messages

    /// Applies a message from the sender.
    public mutating func receive(_ message: SpeakerMessage) -> [Action] {
        switch message {
        case .hello(let id, _, _):
            if id != sessionID {
                // A new session: what the last one left is not its audio, and its clock may be another host's.
                if case .streaming(_, let format, var buffer) = stage {
                    stage = .awaitingHello // lets go of the buffer, so that emptying it copies nothing
                    buffer.removeAll()
                    stage = .streaming(sessionID: id, format: format, buffer: buffer)
                } else {
                    stage = .greeted(sessionID: id)
                }
                anchor = nil
                pendingAnchor = nil
                position = nil
                clock = NetworkClockEstimator()
                forgetOutput()
            }
            // What the buffer will hold: its seconds at the stream's rate (44.1 kHz until a format
            // is known), within the byte cap (two channels until known).
            let seconds = UInt64(max(configuration.bufferSeconds, 1) * Double(format?.sampleRate ?? 44_100))
            let capped = UInt64(configuration.maximumBufferBytes / (Int(format?.channelCount ?? 2) * MemoryLayout<Float>.size))
            let capacity = min(seconds, capped)
            let end = buffer.map { $0.isEmpty ? -1 : $0.endFrame } ?? -1
            return [.send(.welcome(speakerName: configuration.name, bufferCapacityFrames: capacity, bufferEndFrame: end))]
        case .format(let newFormat):
            guard let sessionID else { return [.close(reason: "format before hello")] }
            if let rate = configuration.outputSampleRate, Int(newFormat.sampleRate) != rate {
                return [.send(.error(code: 415, message: "a stream at \(newFormat.sampleRate) Hz; this speaker plays \(rate) Hz")),
                        .close(reason: "a stream at \(newFormat.sampleRate) Hz; this speaker plays \(rate) Hz")]
            }
            if newFormat != format {
                let frames = Int(max(configuration.bufferSeconds, 1) * Double(newFormat.sampleRate))
                let capacity = min(frames, configuration.maximumBufferBytes / (Int(newFormat.channelCount) * MemoryLayout<Float>.size))
                // A compressed stream's decoder first: one that cannot be had leaves the old buffer be.
                let decoder = newFormat.encoding.isCompressed
                    ? try? FLACFrameDecoder(sampleRate: Int(newFormat.sampleRate), channelCount: Int(newFormat.channelCount)) : nil
                if newFormat.encoding.isCompressed && decoder == nil {
                    return [.send(.error(code: 415, message: "this speaker cannot decode \(newFormat.encoding) at \(newFormat.sampleRate) Hz, \(newFormat.channelCount) channels")),
                            .close(reason: "a stream in \(newFormat.encoding) it cannot decode")]
                }
                stage = .awaitingHello // the old buffer goes before the new one is allocated
                let buffer = decoder.map { SpeakerBuffer(capacityFrames: capacity, decoder: $0) }
                    ?? SpeakerBuffer(channelCount: Int(newFormat.channelCount), capacityFrames: capacity)
                stage = .streaming(sessionID: sessionID, format: newFormat, buffer: buffer)
                position = nil
                forgetOutput()
            }
            return []
        case .audio(let firstFrame, let frameCount, let samples):
            if format?.encoding.isCompressed == true { return receiveBlock(samples, frameCount: Int(frameCount), at: firstFrame) }
            switch Self.decodeAudio(frameCount: frameCount, samples: samples, format: format) {
            case .success(let frames): return receiveAudio(frames, at: firstFrame)
            case .failure(let refusal): return [.close(reason: refusal.reason)]
            }
        case .anchor(let newAnchor):
            guard sessionID != nil else { return [.close(reason: "anchor before hello")] }
            let previous = pendingAnchor ?? anchor
            if nextFrame != nil, let current = anchor, current.rate > 0 {
                // Playing: the new anchor takes over at its moment, not on arrival.
                pendingAnchor = newAnchor
            } else {
                anchor = newAnchor
                pendingAnchor = nil
            }
            // The sender announces its timeline again after each flush: the same line needs no
            // rewind (the flush's own comes when its audio does).
            if !(previous.map { isSameTimeline($0, newAnchor) } ?? false) { requestRewind(toNetworkTime: newAnchor.networkTime) }
            return []
        case .flush(let requestID, let fromFrame):
            return [.send(flush(requestID: requestID, from: fromFrame))]
        case .volume(let speaker, let group):
            volume = (speaker, group)
            requestRewindToChangeableFrame()
            return []
        case .metadata(let title, let artist, let album):
            metadata = (title, artist, album)
            return []
        case .artwork(let mimeType, let data):
            // An empty picture says that what plays now has none.
            artwork = data.isEmpty ? nil : (mimeType, data)
            return []
        case .keepAlive:
            return []
        case .welcome, .flushResult, .status, .challenge:
            return [.close(reason: "a speaker's message from the sender")]
        case .proof:
            // The connection answers a proof itself, and only while it is pairing.
            return [.close(reason: "a pairing proof out of place")]
        case .error(let code, let text):
            return [.close(reason: "the sender reported error \(code): \(text)")]
        }
    }

    /// Stores audio already decoded to Float32 (interleaved, in the stream's channels): the
    /// connection decodes outside the lock the output thread waits on, then hands it over here.
    public mutating func receiveAudio(_ frames: [Float], at firstFrame: Int64) -> [Action] {
        guard buffer?.isCompressed != true else { return [.close(reason: "PCM audio in a compressed stream")] }
        guard let (count, stored) = modifyBuffer({ buffer in (frames.count / buffer.channelCount, buffer.write(frames[...], at: firstFrame)) }) else {
            return [.close(reason: "audio before a format")]
        }
        return didStore(stored, of: count, at: firstFrame)
    }

    /// The most frames a FLAC frame holds.
    public static let maximumBlockFrames = 65_535

    /// Stores a compressed block of `frameCount` frames as it came (a FLAC frame of the stream's
    /// format): it is decoded when the output reads it.
    public mutating func receiveBlock(_ payload: [UInt8], frameCount: Int, at firstFrame: Int64) -> [Action] {
        // Not `guard let buffer`: a copy held here would make the write below copy every block held.
        guard let isCompressed = buffer?.isCompressed else { return [.close(reason: "audio before a format")] }
        guard isCompressed else { return [.close(reason: "a compressed block in a PCM stream")] }
        // FLAC's frame sync (14 bits, then a reserved 0 and the blocking strategy): what comes is
        // a FLAC frame, not bytes of another format. A damaged one is found when it is decoded.
        guard payload.count >= 2, payload[0] == 0xFF, payload[1] & 0xFE == 0xF8 else {
            return [.close(reason: "audio of \(frameCount) frames from \(firstFrame) is not a FLAC frame (\(payload.count) bytes)")]
        }
        // A FLAC frame holds at most 65,535 frames: a block said to hold more (its samples are
        // made room for when it is read) is a sender's error, not a buffer's worth of memory.
        guard (1...Self.maximumBlockFrames).contains(frameCount) else {
            return [.close(reason: "a FLAC block said to hold \(frameCount) frames, from \(firstFrame) (at most \(Self.maximumBlockFrames))")]
        }
        let stored = modifyBuffer { $0.write(block: payload, frameCount: frameCount, at: firstFrame) } ?? 0
        return didStore(stored, of: frameCount, at: firstFrame)
    }

    /// After `stored` of `count` frames from `firstFrame` were stored: a stale rendering is done
    /// again, and a sender that outran the buffer is told what was kept.
    private mutating func didStore(_ stored: Int, of count: Int, at firstFrame: Int64) -> [Action] {
        if let stale = staleFrom, firstFrame + Int64(stored) > stale {
            // What the output holds from `stale` on can now be rendered right.
            if let frame = rendered.outputFrame(ofMedia: stale) { requestRewind(toOutputFrame: frame) }
            staleFrom = nil
        }
        guard stored == count else {
            // The sender outran the buffer: it learns what was kept, and sends the rest again later.
            return [.send(.error(code: 507, message: "buffer full: kept \(stored) of \(count) frames from \(firstFrame); the buffer ends at \(buffer!.endFrame)"))]
        }
        return []
    }

    /// A flush from `frame`: done when no part of it may have been played; refused otherwise,
    /// and done from the first frame it would accept (which the answer names), so that the
    /// sender resends from there and no frame it may have played changes: a second flush from
    /// that frame would come later still, and be refused in turn.
    private mutating func flush(requestID: UInt32, from frame: Int64) -> SpeakerMessage {
        let margin = Int64(configuration.flushMargin * Double(format?.sampleRate ?? 44_100))
        let firstUnplayed = firstChangeableFrame.map { $0 + margin } ?? anchor?.mediaFrame ?? buffer?.startFrame ?? 0
        let cut = max(frame, firstUnplayed)
        modifyBuffer { $0.truncate(from: cut) }
        // The output renders again from there when the resent audio comes, not at once: at once
        // it would render the gap as silence and need a second rewind.
        if rendered.outputFrame(ofMedia: cut) != nil { staleFrom = min(staleFrom ?? cut, cut) }
        return .flushResult(requestID: requestID, isAccepted: frame >= firstUnplayed, firstUnplayedFrame: firstUnplayed)
    }

    /// Takes a clock-exchange reply (already matched to a request) that arrived at `t4`.
    @discardableResult
    public mutating func receiveClockReply(_ reply: ClockExchange.Reply, at t4: UInt64) -> NetworkClockEstimator.Sample? {
        clock.add(reply, receivedAt: t4)
    }

    /// What the speaker reports.
    public func status() -> SpeakerMessage {
        let estimate = clock.estimate
        return .status(SpeakerStatus(bufferEndFrame: buffer.map { $0.isEmpty ? -1 : $0.endFrame } ?? -1, nextFrame: firstChangeableFrame ?? -1,
                                     clockOffset: estimate?.offset ?? 0, clockUncertainty: estimate?.uncertainty ?? UInt64.max,
                                     isSynchronized: isReadyToPlay, isPlaying: nextFrame != nil && (anchor?.rate ?? 0) > 0))
    }

    // MARK: - Output

    /// `frameCount` frames for an output with `outputChannels` channels whose first frame is heard
    /// at `heardAt` on the speaker's clock (ns). Silence until an anchor with a good clock says to
    /// play; from then on the frames the anchor maps that time to, sample-exactly at a start.
    ///
    /// An output that can take back what it holds passes its `placement`: the session then keeps
    /// what it rendered until the output can no longer change it, asks for a rewind
    /// (`takeRewindRequest`) when a change reaches into it, and when asked for a frame it already
    /// rendered, renders again from its state there.
    public mutating func render(frameCount: Int, outputChannels: Int, heardAt localTime: UInt64, placement: OutputPlacement? = nil) -> [Float] {
        if let placement {
            if let end = rendered.endFrame, placement.frame < end { restore(toOutputFrame: placement.frame) }
            rendered.forget(before: placement.firstChangeableFrame)
        }
        // In pieces that end where a pending anchor takes over (so that it is heard from its own
        // frame, not from the next block) and last a second at most (the drift controller acts
        // once a piece, and its gains hold for pieces up to about a second).
        let outputRate = outputSampleRate ?? 44_100, frameDuration = self.frameDuration
        var samples: [Float] = []
        samples.reserveCapacity(frameCount * outputChannels)
        var done = 0
        while done < frameCount {
            let heardAt = localTime + UInt64((Double(done) * frameDuration).rounded())
            let count = pieceLength(heardAt: heardAt, atMost: frameCount - done, outputRate: outputRate, frameDuration: frameDuration)
            let piecePlacement = placement.map { OutputPlacement(frame: $0.frame + Int64(done), firstChangeableFrame: $0.firstChangeableFrame) }
            samples += renderPiece(frameCount: count, outputChannels: outputChannels, heardAt: heardAt, placement: piecePlacement)
            done += count
        }
        return samples
    }

    /// How many frames from `heardAt` on render as one piece: up to a second, and no further than
    /// the moment a pending anchor takes over.
    private func pieceLength(heardAt local: UInt64, atMost count: Int, outputRate: Int, frameDuration: Double) -> Int {
        var length = min(count, outputRate)
        if let pending = pendingAnchor, let heard = localTimeHeard(atNetworkTime: pending.networkTime) {
            // The output frame nearest the moment (a frame's time is rounded to the nanosecond).
            let frames = heard > local ? Int((Double(heard - local) / frameDuration).rounded()) : 0
            if frames > 0 { length = min(length, frames) }
        }
        return length
    }

    /// Whether `b` continues the timeline of `a`: the same rate, and `b`'s frame where `a` puts it (within a frame).
    private func isSameTimeline(_ a: RateAnchor, _ b: RateAnchor) -> Bool {
        guard a.rate == b.rate, let format else { return false }
        let elapsed = Double(Int64(bitPattern: b.networkTime &- a.networkTime)) / 1e9
        return abs(Double(a.mediaFrame) + elapsed * a.rate * Double(format.sampleRate) - Double(b.mediaFrame)) < 1
    }

    /// One piece: see `render`.
    private mutating func renderPiece(frameCount: Int, outputChannels: Int, heardAt localTime: UInt64, placement: OutputPlacement?) -> [Float] {
        let before = (position: position, positionAnchor: positionAnchor, drift: drift)
        let (output, read) = renderBlock(frameCount: frameCount, outputChannels: outputChannels, heardAt: localTime, discardsPlayed: placement == nil)
        if let placement {
            rendered.append(RenderedBlocks.Block(outputFrame: placement.frame, frameCount: frameCount, heardAt: localTime, anchor: anchor,
                                                 positionBefore: before.position, positionAfter: position,
                                                 positionAnchorBefore: before.positionAnchor, positionAnchorAfter: positionAnchor, readFrom: read?.from,
                                                 silentFrames: read?.silentFrames ?? 0, step: read?.step ?? 1,
                                                 drift: before.drift))
            if let read, let end = buffer?.endFrame, read.from + Double(frameCount - read.silentFrames) * read.step > Double(end) {
                // The buffer lacked audio the block needed: rendered again when it comes.
                staleFrom = min(staleFrom ?? end, max(end, Int64(read.from.rounded(.down))))
            }
            // Frames the output may still be asked for again stay in the buffer.
            if let earliest = rendered.earliestReadFrame { modifyBuffer { $0.discard(before: Int64(earliest.rounded(.down)) - Int64(FractionalDelayFilter.reach)) } }
        }
        return output
    }

    /// Runs `body` on the buffer in place, or returns nil before a format. The stage lets go of
    /// the buffer meanwhile, so that minutes of audio are changed where they are, not copied.
    @discardableResult
    private mutating func modifyBuffer<Result>(_ body: (inout SpeakerBuffer) -> Result) -> Result? {
        guard case .streaming(let id, let format, var buffer) = stage else { return nil }
        stage = .greeted(sessionID: id)
        defer { stage = .streaming(sessionID: id, format: format, buffer: buffer) }
        return body(&buffer)
    }

    /// The output frame from which the output should render again, once; nil when nothing it
    /// holds has changed.
    public mutating func takeRewindRequest() -> Int64? {
        defer { rewindRequest = nil }
        return rewindRequest
    }

    /// Back to the session's state at output frame `frame`, which was rendered already: the
    /// position and drift correction then, and the anchor then (a newer one stays pending, and
    /// takes over at its time as it would have).
    private mutating func restore(toOutputFrame frame: Int64) {
        guard let block = rendered.cut(at: frame) else { return }
        position = frame >= block.outputFrame ? block.position(atOutputFrame: frame) : block.positionBefore
        positionAnchor = frame >= block.outputFrame ? block.positionAnchor(atOutputFrame: frame) : block.positionAnchorBefore
        drift = block.drift
        if block.anchor != anchor {
            if pendingAnchor == nil { pendingAnchor = anchor }
            anchor = block.anchor
        }
        // Stale audio the output still holds before `frame` is rendered again when its audio comes;
        // from `frame` on, all is rendered again now (and found missing again if it is).
        if let stale = staleFrom, rendered.outputFrame(ofMedia: stale) == nil { staleFrom = nil }
    }

    private mutating func requestRewind(toOutputFrame frame: Int64) {
        rewindRequest = min(rewindRequest ?? frame, frame)
    }

    /// A change from network time `networkTime` on: the output renders again from the frame it
    /// hears then, if it holds that frame already.
    private mutating func requestRewind(toNetworkTime networkTime: UInt64) {
        guard outputSampleRate != nil, let heard = localTimeHeard(atNetworkTime: networkTime) else { return }
        if let frame = rendered.outputFrame(heardAt: heard, frameDuration: frameDuration) { requestRewind(toOutputFrame: frame) }
    }

    /// How long the output takes to play a frame on the speaker's clock (ns): as measured, else nominal.
    private var frameDuration: Double { outputFrameDuration ?? 1e9 / Double(outputSampleRate ?? 44_100) }

    /// The output's rate: the configured one, else the stream's; nil before either is known.
    private var outputSampleRate: Int? { configuration.outputSampleRate ?? format.map { Int($0.sampleRate) } }

    /// The speaker's clock time at which its output plays what is heard at `networkTime` (the
    /// extra delay: the device is later than the output says), or nil without a clock estimate.
    private func localTimeHeard(atNetworkTime networkTime: UInt64) -> UInt64? {
        guard let local = clock.localTime(fromNetwork: networkTime) else { return nil }
        return local > configuration.extraDelay ? local - configuration.extraDelay : 0
    }

    /// What the output holds of the last session or format is not to be heard: it renders again
    /// from its first changeable frame, and nothing rendered before counts.
    private mutating func forgetOutput() {
        requestRewindToChangeableFrame()
        rendered.removeAll()
        staleFrom = nil
    }

    /// A change from now on (a volume, a new session): the output renders again from the first frame it can change.
    private mutating func requestRewindToChangeableFrame() {
        if let frame = changeableOutputFrame, let end = rendered.endFrame, frame < end { requestRewind(toOutputFrame: frame) }
    }

    /// One block: its samples, and where it read the buffer (nil: it played silence only).
    private mutating func renderBlock(frameCount: Int, outputChannels: Int, heardAt localTime: UInt64, discardsPlayed: Bool)
        -> (samples: [Float], read: (from: Double, silentFrames: Int, step: Double)?) {
        var silence: [Float] { [Float](repeating: 0, count: frameCount * outputChannels) }
        // The network time at which this block is heard (the extra delay: later than the device says).
        let network = clock.networkTime(fromLocal: localTime + configuration.extraDelay)
        // Within half a frame of its moment: the piece that starts there is the anchor's (see `pieceLength`).
        let halfFrame = UInt64(500_000_000 / (outputSampleRate ?? 44_100))
        if let pending = pendingAnchor, let network, network + halfFrame >= pending.networkTime {
            anchor = pending
            pendingAnchor = nil
        }
        guard let format, let anchor, buffer != nil, frameCount > 0 else { return (silence, nil) }
        guard anchor.rate > 0 else {
            // Paused: held at the anchor's frame.
            position = Double(anchor.mediaFrame)
            positionAnchor = anchor
            return (silence, nil)
        }
        guard let network else { return (silence, nil) }
        guard position != nil || clock.isGood else { return (silence, nil) } // a poor clock starts nothing
        let sampleRate = Double(format.sampleRate)
        let elapsed = Double(Int64(bitPattern: network &- anchor.networkTime)) / 1e9
        let target = Double(anchor.mediaFrame) + elapsed * anchor.rate * sampleRate
        var silentFrames = 0
        let start: Double
        if target < Double(anchor.mediaFrame) {
            // Before the anchor's moment: silence, then its frame exactly on time.
            silentFrames = min(frameCount, Int((Double(anchor.mediaFrame) - target).rounded()))
            start = Double(anchor.mediaFrame)
        } else if let current = position, abs(current - target) <= configuration.resyncThreshold * sampleRate,
                  let followed = positionAnchor, followed == anchor || isSameTimeline(followed, anchor) {
            // In step: continue without a seam, correcting the drift between the output's clock
            // and the network's by reading a little faster or slower; or, bit-exact, by skipping or
            // repeating whole frames once surely a frame off (the start was whole, so every read stays whole).
            if configuration.isBitExact {
                let uncertainty = Double(clock.estimate?.uncertainty ?? 0) * sampleRate / 1e9
                let frames = drift.wholeFrames(forError: target - current, uncertainty: uncertainty, blockFrameCount: frameCount)
                start = current + Double(frames)
                slippedFrames += abs(frames)
            } else {
                start = current
                drift.update(error: target - current, blockSeconds: Double(frameCount) / sampleRate, sampleRate: sampleRate)
            }
        } else {
            // A start, a new anchor, a gap: jump to where the anchor says.
            start = target.rounded()
            drift.reset()
            if positionAnchor != anchor, let buffer {
                let skipped = min(Int64(start), buffer.endFrame) - max(anchor.mediaFrame, buffer.startFrame)
                if skipped > 0 { lateStart = (anchor, skipped) }
            }
        }
        let playedCount = frameCount - silentFrames
        var step = silentFrames > 0 ? 1 : 1 + rateCorrection
        var from = start
        if from + Double(playedCount) * step + 2 >= Double(buffer!.endFrame) {
            // The audio ends within this block (a pause, a flush, the end of the stream): whole
            // frames, so that the interpolation does not reach into the silence after them and ring.
            step = 1
            from = start.rounded()
        }
        readResampled(from: from, count: playedCount, step: step, channels: Int(format.channelCount))
        if playedCount > 0 {
            position = from + Double(playedCount) * step
            positionAnchor = anchor
            // The filter's reach stays for the next block's reads between frames (a rewindable
            // output's frames are kept until it can no longer ask for them again: `render`).
            if discardsPlayed, let next = nextFrame { modifyBuffer { $0.discard(before: next - Int64(FractionalDelayFilter.reach)) } }
        }
        let mixer = ChannelMixer(selection: configuration.channels, gain: volume.speaker * volume.group)
        let samples = mixer.mix(scratch, channels: Int(format.channelCount), after: silentFrames, frameCount: frameCount, outputChannels: outputChannels)
        return (samples, playedCount > 0 ? (from, silentFrames, step) : nil)
    }

    /// Fills `scratch` with `count` frames read from `start`, advancing `step` frames per frame:
    /// a plain copy when both are whole, else through the fractional-delay filter.
    private mutating func readResampled(from start: Double, count: Int, step: Double, channels: Int) {
        scratch.removeAll(keepingCapacity: true)
        guard count > 0 else { return }
        if step == 1, start == start.rounded() {
            buffer!.read(from: Int64(start), count: count, into: &scratch)
            return
        }
        // The filter's reach on both sides; frames the buffer lacks read as silence, which the
        // filter reads around by cubic interpolation.
        let reach = FractionalDelayFilter.reach
        let base = Int64(start.rounded(.down)) - Int64(reach - 1)
        let needed = Int((start + Double(count) * step).rounded(.down) - Double(base)) + reach + 1
        var source: [Float] = []
        buffer!.read(from: base, count: needed, into: &source)
        FractionalDelayFilter.read(source, channels: channels, from: start - Double(base), count: count, step: step, into: &scratch)
    }

    /// Why an audio message could not be taken.
    public struct AudioRefusal: Error, Sendable {
        /// What was wrong, for the log.
        public var reason: String
    }

    /// A PCM audio message's samples as Float32, once its length is checked against its frame
    /// count and `format` (nil: no format yet). The connection calls it before taking the lock
    /// the output thread waits on, then hands the frames to `receiveAudio`; a compressed
    /// stream's blocks go to `receiveBlock` as they came.
    public static func decodeAudio(frameCount: UInt32, samples: [UInt8], format: AudioStreamFormat?) -> Result<[Float], AudioRefusal> {
        guard let format else { return .failure(AudioRefusal(reason: "audio before a format")) }
        precondition(!format.encoding.isCompressed, "compressed blocks go to receiveBlock")
        guard samples.count == Int(frameCount) * format.bytesPerFrame else {
            return .failure(AudioRefusal(reason: "audio of \(frameCount) frames carries \(samples.count) bytes, not \(Int(frameCount) * format.bytesPerFrame)"))
        }
        return .success(format.encoding.decode(samples))
    }
}
