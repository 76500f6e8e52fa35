import Foundation
import Logging
import LongformCore
import LongformRendering
import LongformSources
import LongformSpeakerProtocol

/// What a speaker route's links send from, under one lock: the audio rendered and not yet heard,
/// the current anchor, volume and metadata, and per speaker what is still to go (its outbox).
/// The route's thread writes; each link takes its next piece of work when the feed wakes it. Keeping one
/// history with a cursor per speaker, rather than a queue per speaker, is what lets a speaker that
/// was away be sent exactly what it is missing.
final class SpeakerFeed: @unchecked Sendable {
    /// One speaker's side.
    struct Outbox {
        /// Whether its connection is up (hello answered).
        var isConnected = false
        /// Counts its connections, so that a wait for an answer ends when the connection it was asked on does.
        var connectionNumber = 0
        /// The earliest flush sent on this connection and not answered yet: one the speaker may
        /// not have seen, which it is sent again if the connection drops.
        var unansweredFlush: Int64?
        /// Messages to send before more audio, in order.
        var control: [SpeakerMessage] = []
        /// The next frame of audio to send it.
        var cursor: Int64 = 0
        /// Where its buffer ended when it last said (welcome, status): audio between here and
        /// the cursor is in flight.
        var acknowledgedEnd: Int64 = 0
        /// The earliest flush it missed while away.
        var flushWhileAway: Int64?
        /// Answers to flushes, by request id: whether accepted, and the first frame it had not played.
        var answers: [UInt32: (isAccepted: Bool, firstUnplayedFrame: Int64)] = [:]
        /// Its last status and the host time it came.
        var status: (report: SpeakerStatus, receivedAt: UInt64)?
        /// Frames its buffer holds (from `welcome`).
        var capacityFrames: Int64?
        /// Its own volume.
        var volume: Float = 1
    }

    /// What a link is to do next.
    enum Work {
        /// Send these messages.
        case messages([SpeakerMessage])
        /// Nothing now: the wait ran out.
        case idle
    }

    /// The stream's format on the wire.
    let format: AudioStreamFormat
    private let condition = NSCondition()
    private var history: SentAudio // guarded by `condition`, as everything below
    /// The history's messages in the wire's encoding, FLAC blocks kept for the whole group.
    private let encoder: AudioPayloadEncoder
    private var outboxes: [Outbox]
    private var anchor: RateAnchor?
    /// While a flush waits for its answers, no audio from this frame on goes out.
    private var heldFrom: Int64?
    private var groupVolume: Float = 1
    private var nowPlaying: NowPlayingInfo?
    private var nextRequestID: UInt32 = 1
    /// Called, outside the lock, after a change that may give link `index` work (see `Wake`): how
    /// a link on an event loop learns of work.
    private var wakeHandlers: [Int: @Sendable () -> Void] = [:]
    /// Audio messages carry at most this many frames (about 93 ms at 44.1 kHz).
    static let framesPerMessage = 4_096
    /// At most this much audio is in flight to a speaker (seconds): sent, and not yet said to be in
    /// its buffer. It bounds the wait of a flush or an anchor behind audio; and since a speaker
    /// far ahead reports after reads 10 ms apart (`ReadPacing`), it bounds the fill's rate too:
    /// a second of 16-bit PCM each 10 ms is 141 Mbit/s.
    static let inFlightSeconds = 1.0
    /// The same for a compressed stream, for the whole group, shared among the speakers connected
    /// (`compressedSpeakerInFlightSeconds` each at least): a group's speakers mostly share one
    /// link, where a command waits behind all of their audio in flight. Two seconds of music as
    /// FLAC (under half of 16-bit PCM's bytes) let one speaker fill a 50 Mbit/s link read every 10 ms.
    static let compressedGroupInFlightSeconds = 2.0
    /// A speaker's share is never less (seconds): a speaker far ahead reports after each read that
    /// brought a quarter second (`SenderConnection`), and a smaller share waits for its status of
    /// once a second.
    static let compressedSpeakerInFlightSeconds = 0.5
    /// A compressed block shorter than the grid allows, at the end of what is rendered, goes only
    /// to a speaker that will play it within this many seconds (or is not playing): the others
    /// wait for the whole block. Once the look-ahead is full the route renders a period at a
    /// time, and sending each period as a block of its own (each a new FLAC encoder) cost a
    /// sender 7.6 CPU s a minute.
    static let shortBlockLeadSeconds = 1.0

    private let logger = Logger(label: LogLabel.speakerRoute)

    /// A feed for `speakerCount` speakers of a stream in `format`; throws when its encoding (FLAC)
    /// cannot be had.
    init(speakerCount: Int, format: AudioStreamFormat) throws(FLACCodecError) {
        self.format = format
        encoder = try AudioPayloadEncoder(format: format, blockFrameCount: Self.framesPerMessage)
        history = SentAudio(channelCount: Int(format.channelCount), sampleRate: Int(format.sampleRate))
        outboxes = Array(repeating: Outbox(), count: speakerCount)
    }

    /// The links a change may have given work: their wake handlers are called.
    private enum Wake {
        /// Every link (new audio, a control message for all).
        case all
        /// Link `index` alone (a status that made room in its flight).
        case link(Int)
        /// None (the route's thread waits on the condition for answers; links have nothing new).
        case none
    }

    /// Runs a change under the lock, wakes every waiter in `nextWork` or `refusals`, and calls the
    /// wake handlers of the links in `wake` after the lock is let go. Only a change that may give a
    /// link work wakes it: each wake-up is a task on the links' event loop.
    private func locked<T>(waking wake: Wake = .all, _ body: () -> T) -> T {
        condition.lock()
        let result = body()
        let handlers: [@Sendable () -> Void]
        switch wake {
        case .all: handlers = Array(wakeHandlers.values)
        case .link(let index): handlers = wakeHandlers[index].map { [$0] } ?? []
        case .none: handlers = []
        }
        condition.broadcast()
        condition.unlock()
        for handler in handlers { handler() }
        return result
    }

    /// Sets what is called after a change that may give link `index` work (nil: nothing; see `Wake`).
    func setWakeHandler(_ handler: (@Sendable () -> Void)?, forLink index: Int) {
        reading { wakeHandlers[index] = handler }
    }

    /// Reads under the lock, waking nobody.
    private func reading<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    // MARK: - The route's side

    /// Adds rendered audio at `frame`; with `wakingLinks` false the links are not told of it
    /// until `wakeLinks()` or another change (audio far ahead of the speakers, gathered so that
    /// they are sent it at once, not a block at a time).
    func append(_ frames: UnsafeBufferPointer<Float>, at frame: Int64, wakingLinks: Bool = true) {
        locked(waking: wakingLinks ? .all : .none) {
            let (start, end) = (history.startFrame, history.endFrame)
            history.append(frames, at: frame)
            // Anything but a continuation (or one after a gap) replaced what was held.
            if history.startFrame != start || frame < end { encoder.forgetAllBlocks() }
        }
    }

    /// Tells every link of the audio appended without waking them.
    func wakeLinks() {
        locked {}
    }

    /// Forgets audio heard before `frame`.
    func discardHeard(before frame: Int64) {
        locked(waking: .none) {
            let start = history.startFrame
            history.discard(before: frame)
            if history.startFrame != start { encoder.forgetBlocks(before: history.startFrame) }
        }
    }

    /// Sends `newAnchor` to every speaker, and to those that connect later.
    func announce(_ newAnchor: RateAnchor) {
        locked {
            anchor = newAnchor
            for index in outboxes.indices where outboxes[index].isConnected { outboxes[index].control.append(.anchor(newAnchor)) }
        }
    }

    /// Sends a flush from `frame` to every connected speaker and holds audio from there back until
    /// `endFlush`. Returns the request id and the speakers asked (with the connection asked on).
    func beginFlush(from frame: Int64) -> (requestID: UInt32, asked: [(index: Int, connection: Int)]) {
        locked {
            let id = nextRequestID
            nextRequestID = nextRequestID == .max ? 1 : nextRequestID + 1 // 0 is for the flush sent on reconnecting
            heldFrom = frame
            var asked: [(index: Int, connection: Int)] = []
            for index in outboxes.indices {
                if outboxes[index].isConnected {
                    outboxes[index].control.append(.flush(requestID: id, fromFrame: frame))
                    outboxes[index].cursor = min(outboxes[index].cursor, frame)
                    // What it held from the flush's frame on goes: audio sent again from there is in flight.
                    outboxes[index].acknowledgedEnd = min(outboxes[index].acknowledgedEnd, frame)
                    outboxes[index].unansweredFlush = min(outboxes[index].unansweredFlush ?? frame, frame)
                    asked.append((index, outboxes[index].connectionNumber))
                } else {
                    outboxes[index].flushWhileAway = min(outboxes[index].flushWhileAway ?? frame, frame)
                }
            }
            return (id, asked)
        }
    }

    /// Waits up to `timeout` seconds for the answers of `asked` to flush `requestID` (or until
    /// `shouldStop`); returns, by speaker, the first frame each refusing one would accept (empty:
    /// all accepted, or gone).
    func refusals(of requestID: UInt32, asked: [(index: Int, connection: Int)], timeout: Double, shouldStop: () -> Bool) -> [Int: Int64] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        func isWaiting(_ speaker: (index: Int, connection: Int)) -> Bool {
            let outbox = outboxes[speaker.index]
            return outbox.isConnected && outbox.connectionNumber == speaker.connection && outbox.answers[requestID] == nil
        }
        while !shouldStop() && asked.contains(where: isWaiting) {
            guard condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.05))) || Date() < deadline else { break }
        }
        var refused: [Int: Int64] = [:]
        for (index, _) in asked {
            if let answer = outboxes[index].answers.removeValue(forKey: requestID), !answer.isAccepted { refused[index] = answer.firstUnplayedFrame }
        }
        return refused
    }

    /// Ends a flush from `from`: audio from `resumed` on is dropped, and audio flows again. The
    /// speakers that accepted `from` get the audio in between again; those in `refusing` cut
    /// their buffers at the frame they named instead (by speaker), and get it again from there.
    func endFlush(from: Int64, resumingAt resumed: Int64, refusing: [Int: Int64]) {
        locked {
            history.truncate(from: resumed)
            encoder.forgetBlocks(from: resumed)
            heldFrom = nil
            for (index, firstAccepted) in refusing where outboxes[index].isConnected {
                // It holds what comes before its cut (unless it was still being sent what comes before `from`).
                if outboxes[index].cursor >= from { outboxes[index].cursor = max(from, min(firstAccepted, resumed)) }
            }
        }
    }

    /// Sets the volume of speaker `index`, or of the group when nil.
    func setVolume(_ volume: Float, ofSpeaker index: Int?) {
        locked {
            if let index, outboxes.indices.contains(index) { outboxes[index].volume = volume } else { groupVolume = volume }
            for index in outboxes.indices where outboxes[index].isConnected {
                outboxes[index].control.append(.volume(speaker: outboxes[index].volume, group: groupVolume))
            }
        }
    }

    /// Sends what plays now to every speaker, and to those that connect later: the tags, and the
    /// artwork when it differs from the last sent (an album's tracks share theirs).
    func setNowPlaying(_ info: NowPlayingInfo) {
        locked {
            let isNewArtwork = info.artwork != nowPlaying?.artwork
            nowPlaying = info
            for index in outboxes.indices where outboxes[index].isConnected {
                outboxes[index].control.append(contentsOf: Self.messages(for: info, withArtwork: isNewArtwork))
            }
        }
    }

    /// The metadata message, and the artwork's when `withArtwork` (an empty picture clears it).
    private static func messages(for info: NowPlayingInfo, withArtwork: Bool) -> [SpeakerMessage] {
        var messages: [SpeakerMessage] = [.metadata(title: info.title, artist: info.artist, album: info.album)]
        if withArtwork { messages.append(.artwork(mimeType: info.artwork?.mimeType ?? "", data: info.artwork?.data ?? [])) }
        return messages
    }

    /// Whether `artwork` fits in one message (the protocol's payload limit, less its MIME type and a sealed frame's tag).
    static func fitsInOneMessage(_ artwork: NowPlayingArtwork) -> Bool {
        artwork.data.count + artwork.mimeType.utf8.count + 64 <= SpeakerFrame.maximumPayloadLength
    }

    /// The smallest buffer among the speakers connected (nil: none yet).
    var smallestCapacityFrames: Int64? {
        reading { outboxes.compactMap { $0.isConnected ? $0.capacityFrames : nil }.min() }
    }

    /// Whether every connected speaker has been sent the audio up to `frame` (and at least one is
    /// connected); for a compressed stream, up to the block boundary at or before it, since a block
    /// still growing there waits for its whole (`shortBlockLeadSeconds`).
    func isEveryConnectedSpeakerSent(upTo frame: Int64) -> Bool {
        let sentEnough = format.encoding.isCompressed ? encoder.blockBoundary(atOrBefore: frame) : frame
        return reading {
            let connected = outboxes.filter(\.isConnected)
            return !connected.isEmpty && connected.allSatisfy { $0.cursor >= sentEnough }
        }
    }

    /// How many speakers are connected and said in their last status that they can play in step
    /// (their clock is good and their output plays).
    var synchronizedSpeakerCount: Int {
        reading { outboxes.filter { $0.isConnected && $0.status?.report.isSynchronized == true }.count }
    }

    /// The latest statuses of the connected speakers that play, with the host time each came.
    var playingStatuses: [(report: SpeakerStatus, receivedAt: UInt64)] {
        reading { outboxes.compactMap { $0.isConnected ? $0.status : nil }.filter { $0.report.isPlaying } }
    }

    // MARK: - A link's side

    /// Speaker `index` said welcome: returns what it must be sent first (the format, a flush it
    /// missed, the anchor, volume and metadata) and starts its audio at the end of its buffer, or,
    /// when it holds nothing of this session, at `startFrame` (the frame heard now plus the lead).
    func linkDidConnect(_ index: Int, bufferEndFrame: Int64, capacityFrames: UInt64, startFrame: Int64) -> [SpeakerMessage] {
        // The link sends what it is given, then takes its work: no wake-up needed.
        locked(waking: .none) {
            var outbox = outboxes[index]
            outbox.isConnected = true
            outbox.connectionNumber += 1
            outbox.capacityFrames = Int64(capacityFrames)
            outbox.answers = [:]
            outbox.status = nil
            var messages: [SpeakerMessage] = [.format(format)]
            var cursor = bufferEndFrame >= 0 ? max(bufferEndFrame, startFrame) : startFrame
            if let missed = outbox.flushWhileAway, bufferEndFrame > missed {
                // Audio it holds from before a flush it missed must go; whatever it answers, it is sent again from there.
                messages.append(.flush(requestID: 0, fromFrame: missed))
                cursor = min(cursor, missed)
                // As for any flush: until it is answered, a status counts its buffer to `missed` at most.
                outbox.unansweredFlush = missed
            }
            outbox.flushWhileAway = nil
            outbox.cursor = min(max(cursor, history.startFrame), max(history.endFrame, startFrame))
            outbox.acknowledgedEnd = outbox.cursor
            if let anchor { messages.append(.anchor(anchor)) }
            messages.append(.volume(speaker: outbox.volume, group: groupVolume))
            if let nowPlaying { messages.append(contentsOf: Self.messages(for: nowPlaying, withArtwork: nowPlaying.artwork != nil)) }
            outbox.control = []
            outboxes[index] = outbox
            return messages
        }
    }

    /// Speaker `index`'s connection is gone. A flush it may not have seen is sent when it comes back.
    func linkDidDisconnect(_ index: Int) {
        locked(waking: .none) {
            var outbox = outboxes[index]
            guard outbox.isConnected else { return }
            outbox.isConnected = false
            for message in outbox.control {
                if case .flush(_, let frame) = message { outbox.unansweredFlush = min(outbox.unansweredFlush ?? frame, frame) }
            }
            if let missed = outbox.unansweredFlush { outbox.flushWhileAway = min(outbox.flushWhileAway ?? missed, missed) }
            outbox.unansweredFlush = nil
            outbox.control = []
            outboxes[index] = outbox
        }
    }

    /// Speaker `index` answered flush `requestID`.
    func record(answer isAccepted: Bool, firstUnplayedFrame: Int64, ofRequest requestID: UInt32, from index: Int) {
        locked(waking: .none) {
            // Answers come in order: one means every flush sent before it was seen.
            outboxes[index].unansweredFlush = nil
            if requestID != 0 { outboxes[index].answers[requestID] = (isAccepted, firstUnplayedFrame) }
        }
    }

    /// Speaker `index` reported its status.
    func record(status: SpeakerStatus, from index: Int) {
        locked(waking: .link(index)) {
            outboxes[index].status = (status, HostClock.now())
            // A status the speaker sent before it read a flush still counts the audio the flush
            // takes back: until the flush is answered, its buffer ends at the flush's frame at most,
            // or the audio sent again from there would not count in flight (minutes of it at once,
            // and a command behind them on a slow link).
            if status.bufferEndFrame >= 0 {
                outboxes[index].acknowledgedEnd = min(status.bufferEndFrame, outboxes[index].unansweredFlush ?? .max)
            }
            // Audio before the first frame a playing speaker can still change is never heard: it
            // is not sent, nor waited for (the speaker keeps none of it, so no status would ever
            // acknowledge it).
            if status.isPlaying && status.nextFrame > outboxes[index].acknowledgedEnd {
                outboxes[index].acknowledgedEnd = status.nextFrame
                outboxes[index].cursor = max(outboxes[index].cursor, status.nextFrame)
            }
        }
    }

    /// The next thing link `index` should send, waiting up to `timeout` seconds for one: its
    /// control messages, else the next piece of audio.
    func nextWork(for index: Int, timeout: Double) -> Work {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let messages = takeWorkLocked(for: index) { return .messages(messages) }
            guard condition.wait(until: deadline) else { return .idle }
        }
    }

    /// The next thing link `index` should send now, or nil: its control messages, else the next
    /// piece of audio.
    func takeWork(for index: Int) -> [SpeakerMessage]? {
        reading { takeWorkLocked(for: index) }
    }

    /// Frames of audio that may be in flight to one speaker with `connectedCount` connected.
    private func inFlightLimitFrames(connectedCount: Int) -> Int64 {
        let share = max(Self.compressedSpeakerInFlightSeconds, Self.compressedGroupInFlightSeconds / Double(max(1, connectedCount)))
        return Int64((format.encoding.isCompressed ? share : Self.inFlightSeconds) * Double(format.sampleRate))
    }

    private func takeWorkLocked(for index: Int) -> [SpeakerMessage]? {
        let outbox = outboxes[index]
        if !outbox.control.isEmpty {
            outboxes[index].control = []
            return outbox.control
        }
        let end = min(history.endFrame, heldFrom ?? .max)
        let inFlightLimit = inFlightLimitFrames(connectedCount: outboxes.count { $0.isConnected })
        // A paused span is neither sent nor counted in flight (see `SentAudio.unrenderedSpans`),
        // nor is audio no longer held (heard, or skipped by a pause longer than the history keeps).
        let first = history.firstRenderedFrame(from: max(outbox.cursor, history.startFrame))
        let unacknowledged = max(outbox.acknowledgedEnd, history.startFrame)
        guard outbox.isConnected, first < end,
              history.renderedFrameCount(in: unacknowledged..<max(outbox.cursor, unacknowledged)) < inFlightLimit else { return nil }
        // Never past a held flush: that audio may be about to change.
        let limit = encoder.messageFrameLimit(at: first)
        let samples = history.renderedFrames(from: first, count: Int(min(Int64(limit), end - first)))
        let count = samples.count / Int(format.channelCount)
        if format.encoding.isCompressed, count < limit, first + Int64(count) == end, !isDue(first, for: outbox) { return nil }
        outboxes[index].cursor = first + Int64(count)
        do {
            return [.audio(firstFrame: first, frameCount: UInt32(count), samples: try encoder.payload(for: samples, at: first))]
        } catch {
            // FFmpeg's FLAC encoder fails only without memory: the speaker hears a gap, the log says why.
            logger.error("speaker route: frames \(first)..<\(first + Int64(count)) not sent: \(error)")
            return nil
        }
    }

    /// Whether the speaker of `outbox` will play `frame` within `shortBlockLeadSeconds` (or does
    /// not play yet): a block that may still grow goes to it short rather than wait.
    private func isDue(_ frame: Int64, for outbox: Outbox) -> Bool {
        guard let status = outbox.status?.report, status.isPlaying, status.nextFrame >= 0 else { return true }
        return frame - status.nextFrame < Int64(Self.shortBlockLeadSeconds * Double(format.sampleRate))
    }

    /// How many whole FLAC blocks the feed keeps encoded (for tests).
    var keptBlockCount: Int { reading { encoder.keptBlockCount } }
}
