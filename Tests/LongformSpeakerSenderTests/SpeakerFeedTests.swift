import Foundation
import LongformSources
@testable import LongformSpeakerSender
import LongformSpeakerProtocol
import Synchronization
import Testing

/// What the speaker route's links are given to send, in order, without sockets: audio never crosses
/// a flush that waits for its answers, and a flush a speaker may not have seen is sent again when
/// it reconnects.
@Suite struct SpeakerFeedTests {
    private static let format = AudioStreamFormat(sampleRate: 44_100, channelCount: 1, encoding: .float32)

    private func append(_ feed: SpeakerFeed, _ count: Int, at first: Int64, value: Float) {
        let samples = [Float](repeating: value, count: count)
        samples.withUnsafeBufferPointer { feed.append($0, at: first) }
    }

    /// The messages link 0 is given until it has nothing more.
    private func drain(_ feed: SpeakerFeed) -> [SpeakerMessage] {
        var messages: [SpeakerMessage] = []
        while case .messages(let batch) = feed.nextWork(for: 0, timeout: 0.01) { messages += batch }
        return messages
    }

    /// The audio among `messages`: first frame, frame count and the first sample's value.
    private func audio(_ messages: [SpeakerMessage]) -> [(first: Int64, count: UInt32, value: Float)] {
        messages.compactMap { message in
            guard case .audio(let first, let count, let bytes) = message else { return nil }
            return (first, count, AudioStreamFormat.Encoding.float32.decode(Array(bytes.prefix(4)))[0])
        }
    }

    /// The status of a speaker that does not play yet, its buffer ending at `bufferEnd`.
    private func notPlaying(holdingTo bufferEnd: Int64) -> SpeakerStatus {
        SpeakerStatus(bufferEndFrame: bufferEnd, nextFrame: 0, clockOffset: 0, clockUncertainty: 0, isSynchronized: true, isPlaying: false)
    }

    /// After flush `requestID` from frame 10,000 and a second of the audio sent again from there:
    /// a status the speaker sent before it read the flush (its buffer to 441,000) opens no room;
    /// the flush's answer and the next status do.
    private func expectOnlyTheAnswerOpensRoom(_ feed: SpeakerFeed, requestID: UInt32, sourceLocation: SourceLocation = #_sourceLocation) {
        feed.record(status: notPlaying(holdingTo: 441_000), from: 0)
        let afterStale = audio(drain(feed))
        #expect(afterStale.isEmpty, "the stale status sent \(afterStale.count) more messages, to frame \(afterStale.last.map { $0.first + Int64($0.count) } ?? 0)",
                sourceLocation: sourceLocation)
        feed.record(answer: true, firstUnplayedFrame: 10_000, ofRequest: requestID, from: 0)
        feed.record(status: notPlaying(holdingTo: 10_000 + 44_100), from: 0)
        #expect(!audio(drain(feed)).isEmpty, "the speaker's word after the flush opens it", sourceLocation: sourceLocation)
    }

    @Test func aPlayingSpeakerIsNeitherSentNorWaitedForAudioBeforeItsFirstChangeableFrame() throws {
        let feed = try SpeakerFeed(speakerCount: 1, format: Self.format)
        _ = feed.linkDidConnect(0, bufferEndFrame: -1, capacityFrames: 1_000_000, startFrame: 0)
        append(feed, 132_300, at: 0, value: 0.25)
        let sent = audio(drain(feed))
        let sentEnd = sent.last.map { $0.first + Int64($0.count) } ?? 0
        #expect(sentEnd > 0 && sentEnd <= 44_100 + 4_096, "a second in flight, then the link waits for the speaker: \(sentEnd)")
        // The speaker plays past all of it and keeps none (a paused span's silence), and says so.
        feed.record(status: SpeakerStatus(bufferEndFrame: -1, nextFrame: 100_000, clockOffset: 0, clockUncertainty: 0,
                                          isSynchronized: true, isPlaying: true), from: 0)
        let rest = audio(drain(feed))
        #expect(rest.first?.first == 100_000, "from its first changeable frame: \(rest.map(\.first))")
        #expect(rest.last.map { $0.first + Int64($0.count) } == 132_300, "and on to the end")
    }

    @Test func audioFromAHeldFlushOnWaitsForItsEndAndIsTheNewAudio() throws {
        let feed = try SpeakerFeed(speakerCount: 1, format: Self.format)
        _ = feed.linkDidConnect(0, bufferEndFrame: -1, capacityFrames: 1_000_000, startFrame: 0)
        append(feed, 10_000, at: 0, value: 0.25)
        let (_, asked) = feed.beginFlush(from: 5_000)
        #expect(asked.map(\.index) == [0])
        let held = drain(feed)
        guard case .flush(_, 5_000) = held.first else { Issue.record("the flush goes first: \(held)"); return }
        // Audio up to the flush's frame, not a frame past it.
        #expect(audio(held).map(\.first) == [0, 4_096] && audio(held).map(\.count) == [4_096, 904])
        feed.endFlush(from: 5_000, resumingAt: 5_000, refusing: [:])
        append(feed, 3_000, at: 5_000, value: 0.5)
        let after = audio(drain(feed))
        #expect(after.count == 1 && after[0].first == 5_000 && after[0].count == 3_000 && after[0].value == 0.5, "\(after)")
    }

    @Test func audioSentAgainAfterAFlushCountsInFlightThoughTheSpeakerHadAcknowledgedFarBeyond() throws {
        let feed = try SpeakerFeed(speakerCount: 1, format: Self.format)
        _ = feed.linkDidConnect(0, bufferEndFrame: -1, capacityFrames: 10_000_000, startFrame: 0)
        append(feed, 441_000, at: 0, value: 0.25)
        // Ten seconds sent and held, a second at a time.
        var held: Int64 = 0
        while held < 441_000 {
            held = audio(drain(feed)).last.map { $0.first + Int64($0.count) } ?? held
            feed.record(status: notPlaying(holdingTo: held), from: 0)
        }
        // A seek to frame 10,000: flushed, and the new audio rendered from there.
        let (id, _) = feed.beginFlush(from: 10_000)
        feed.endFlush(from: 10_000, resumingAt: 10_000, refusing: [:])
        append(feed, 431_000, at: 10_000, value: 0.5)
        let first = audio(drain(feed))
        #expect(first.first?.first == 10_000 && first.first?.value == 0.5, "\(first.map(\.first))")
        #expect(first.last.map { $0.first + Int64($0.count) - 10_000 }.map { $0 <= 44_100 + 4_096 } == true,
                "a second in flight from the flush, not all the speaker held before it: \(first.last.map { $0.first + Int64($0.count) } ?? 0)")
        expectOnlyTheAnswerOpensRoom(feed, requestID: id)
    }

    /// A speaker sent `held` frames of 0.25 misses a flush from `flushFrame` (its connection
    /// dropped before the flush began, or after, before its link took it), the audio from there is
    /// rendered again at 0.5, and it comes back holding all it had: the feed, what the speaker is
    /// sent first, and the audio it is sent then.
    private func reconnectAfterMissingAFlush(held: Int64, from flushFrame: Int64, droppedAfterTheFlushBegan: Bool) throws
        -> (feed: SpeakerFeed, initial: [SpeakerMessage], audio: [(first: Int64, count: UInt32, value: Float)]) {
        let feed = try SpeakerFeed(speakerCount: 1, format: Self.format)
        _ = feed.linkDidConnect(0, bufferEndFrame: -1, capacityFrames: 10_000_000, startFrame: 0)
        append(feed, Int(held), at: 0, value: 0.25)
        _ = drain(feed)
        if !droppedAfterTheFlushBegan { feed.linkDidDisconnect(0) }
        _ = feed.beginFlush(from: flushFrame)
        if droppedAfterTheFlushBegan { feed.linkDidDisconnect(0) }
        feed.endFlush(from: flushFrame, resumingAt: flushFrame, refusing: [:])
        append(feed, Int(held - flushFrame), at: flushFrame, value: 0.5)
        let initial = feed.linkDidConnect(0, bufferEndFrame: held, capacityFrames: 10_000_000, startFrame: 0)
        return (feed, initial, audio(drain(feed)))
    }

    @Test func aFlushUnsentWhenTheConnectionDropsIsSentOnReconnecting() throws {
        // The speaker still holds the old audio to frame 8,000: it is flushed from 3,000, and sent the new.
        let (_, initial, after) = try reconnectAfterMissingAFlush(held: 8_000, from: 3_000, droppedAfterTheFlushBegan: true)
        #expect(initial.contains(.flush(requestID: 0, fromFrame: 3_000)), "\(initial)")
        #expect(after.first?.first == 3_000 && after.first?.value == 0.5, "\(after)")
    }

    @Test func audioSentAgainAfterAFlushMissedWhileAwayCountsInFlightThoughTheSpeakerHoldsFarBeyond() throws {
        // A seek to frame 10,000 while the speaker is away; it comes back holding ten seconds.
        let (feed, initial, first) = try reconnectAfterMissingAFlush(held: 441_000, from: 10_000, droppedAfterTheFlushBegan: false)
        #expect(initial.contains(.flush(requestID: 0, fromFrame: 10_000)), "\(initial)")
        #expect(first.first?.first == 10_000 && first.first?.value == 0.5, "\(first.map(\.first))")
        expectOnlyTheAnswerOpensRoom(feed, requestID: 0)
    }

    /// Two speakers sent 10,000 frames of 0.25, and a flush from 4,000 begun: the feed, the
    /// request's id and the speakers asked.
    private func twoSpeakersFlushingFrom4000() throws -> (feed: SpeakerFeed, id: UInt32, asked: [(index: Int, connection: Int)]) {
        let feed = try SpeakerFeed(speakerCount: 2, format: Self.format)
        for index in 0..<2 { _ = feed.linkDidConnect(index, bufferEndFrame: -1, capacityFrames: 1_000_000, startFrame: 0) }
        append(feed, 10_000, at: 0, value: 0.25)
        for index in 0..<2 { while case .messages = feed.nextWork(for: index, timeout: 0.01) {} }
        let (id, asked) = feed.beginFlush(from: 4_000)
        return (feed, id, asked)
    }

    @Test func aSpeakerThatRefusesIsSentAgainFromWhereItCutAndTheOthersAreSentTheAudioInBetween() throws {
        let (feed, id, asked) = try twoSpeakersFlushingFrom4000()
        feed.record(answer: true, firstUnplayedFrame: 1_000, ofRequest: id, from: 0)
        feed.record(answer: false, firstUnplayedFrame: 6_000, ofRequest: id, from: 1)
        let refusals = feed.refusals(of: id, asked: asked, timeout: 1) { false }
        #expect(refusals == [1: 6_000])
        feed.endFlush(from: 4_000, resumingAt: 6_000, refusing: refusals)
        // Speaker 0 gets 4,000..<6,000 again (the old audio: the change moved to 6,000); speaker 1,
        // which cut its buffer at 6,000, nothing but the flush it answered (no second one).
        let first = audio(drain(feed))
        #expect(first.first?.first == 4_000 && first.reduce(0) { $0 + Int($1.count) } == 2_000, "\(first)")
        var second: [SpeakerMessage] = []
        while case .messages(let batch) = feed.nextWork(for: 1, timeout: 0.01) { second += batch }
        #expect(second == [.flush(requestID: id, fromFrame: 4_000)], "\(second)")
    }

    /// Two refuse, at different frames: the one that cut earlier gets the old audio again from its cut.
    @Test func aSpeakerThatCutBeforeWhereTheRouteResumesIsSentTheAudioFromItsCut() throws {
        let (feed, id, asked) = try twoSpeakersFlushingFrom4000()
        feed.record(answer: false, firstUnplayedFrame: 5_000, ofRequest: id, from: 0)
        feed.record(answer: false, firstUnplayedFrame: 6_000, ofRequest: id, from: 1)
        feed.endFlush(from: 4_000, resumingAt: 6_000, refusing: feed.refusals(of: id, asked: asked, timeout: 1) { false })
        append(feed, 1_000, at: 6_000, value: 0.5)
        var sent: [[SpeakerMessage]] = [[], []]
        for index in 0..<2 { while case .messages(let batch) = feed.nextWork(for: index, timeout: 0.01) { sent[index] += batch } }
        let (earlier, later) = (audio(sent[0]), audio(sent[1]))
        #expect(earlier.first?.first == 5_000 && earlier.first?.value == 0.25 && earlier.reduce(0) { $0 + Int($1.count) } == 2_000, "\(earlier)")
        #expect(later.first?.first == 6_000 && later.first?.value == 0.5 && later.reduce(0) { $0 + Int($1.count) } == 1_000, "\(later)")
        #expect(sent.allSatisfy { $0.filter { if case .flush = $0 { true } else { false } } == [.flush(requestID: id, fromFrame: 4_000)] }, "no second flush: \(sent)")
    }

    @Test func aPausedSpanIsNotSentSoTheResumedAudioGoesFirst() throws {
        let feed = try SpeakerFeed(speakerCount: 2, format: Self.format)
        _ = feed.linkDidConnect(0, bufferEndFrame: -1, capacityFrames: 1_000_000, startFrame: 0)
        append(feed, 10_000, at: 0, value: 0.25)
        _ = drain(feed)
        // A pause of more than the second in flight, then the audio it resumes with.
        append(feed, 3_000, at: 60_000, value: 0.5)
        let resumed = audio(drain(feed))
        #expect(resumed.count == 1 && resumed[0].first == 60_000 && resumed[0].count == 3_000 && resumed[0].value == 0.5, "\(resumed)")
        // A speaker that joins later is sent what came before the pause, then the resumed audio.
        _ = feed.linkDidConnect(1, bufferEndFrame: -1, capacityFrames: 1_000_000, startFrame: 0)
        var joined: [SpeakerMessage] = []
        while case .messages(let batch) = feed.nextWork(for: 1, timeout: 0.01) { joined += batch }
        #expect(audio(joined).map(\.first) == [0, 4_096, 8_192, 60_000] && audio(joined).map(\.count) == [4_096, 4_096, 1_808, 3_000], "\(audio(joined))")
    }

    @Test func onlyAChangeThatMayGiveALinkWorkWakesIt() throws {
        let feed = try SpeakerFeed(speakerCount: 2, format: Self.format)
        let wakes = Mutex([0, 0])
        for index in 0..<2 {
            _ = feed.linkDidConnect(index, bufferEndFrame: -1, capacityFrames: 1_000_000, startFrame: 0)
            feed.setWakeHandler({ wakes.withLock { $0[index] += 1 } }, forLink: index)
        }
        append(feed, 100_000, at: 0, value: 0.25)
        #expect(wakes.withLock { $0 } == [1, 1], "new audio: every link")
        // The route's idle loop discards heard audio every 10 ms; answers are for the route's thread.
        feed.discardHeard(before: 50_000)
        feed.record(answer: true, firstUnplayedFrame: 0, ofRequest: 1, from: 0)
        #expect(wakes.withLock { $0 } == [1, 1])
        // A status may make room in its own link's flight only.
        feed.record(status: SpeakerStatus(bufferEndFrame: 40_000, nextFrame: 1_000, clockOffset: 0, clockUncertainty: 0,
                                          isSynchronized: true, isPlaying: true), from: 1)
        #expect(wakes.withLock { $0 } == [1, 2])
        feed.setVolume(0.5, ofSpeaker: nil)
        #expect(wakes.withLock { $0 } == [2, 3], "a control message for all: every link")
        // Audio far ahead is gathered: the links hear of it when the route tells them, all at once.
        for block in 0..<11 {
            [Float](repeating: 0.5, count: 4_096).withUnsafeBufferPointer { feed.append($0, at: 100_000 + Int64(block) * 4_096, wakingLinks: false) }
        }
        #expect(wakes.withLock { $0 } == [2, 3], "gathered audio wakes no link")
        feed.wakeLinks()
        #expect(wakes.withLock { $0 } == [3, 4], "told: every link, once")
    }

    @Test func onlyAudioFarAheadOnARouteThatRefillsASecondAtATimeIsGathered() {
        let rate: Int64 = 44_100, limit = 180 * rate
        // The first half of the fill goes block by block (the speakers start on it), the rest a
        // second at a time; so does a top-up, at the limit.
        #expect(!SpeakerRoute.gathersFrames(at: 1_000, heard: 0, aheadLimit: limit, sampleRate: rate))
        #expect(!SpeakerRoute.gathersFrames(at: limit / 2, heard: 0, aheadLimit: limit, sampleRate: rate))
        #expect(SpeakerRoute.gathersFrames(at: limit / 2 + 1, heard: 0, aheadLimit: limit, sampleRate: rate))
        #expect(SpeakerRoute.gathersFrames(at: 60 * rate + limit - rate, heard: 60 * rate, aheadLimit: limit, sampleRate: rate))
        // A look-ahead under 10 s is refilled block by block, and so told.
        #expect(!SpeakerRoute.gathersFrames(at: 8 * rate, heard: 0, aheadLimit: 9 * rate, sampleRate: rate))
    }

    @Test func afterAPauseLongerThanTheHistoryKeepsASecondOfResumedAudioGoesAtOnce() throws {
        for discardsBeforeResuming in [true, false] {
            let feed = try SpeakerFeed(speakerCount: 1, format: Self.format)
            _ = feed.linkDidConnect(0, bufferEndFrame: -1, capacityFrames: 10_000_000, startFrame: 0)
            append(feed, 300_000, at: 0, value: 0.25)
            // The speaker has it all, paused at its end.
            let paused = SpeakerStatus(bufferEndFrame: 300_000, nextFrame: -1, clockOffset: 0, clockUncertainty: 0, isSynchronized: true, isPlaying: false)
            while case .messages = feed.nextWork(for: 0, timeout: 0.01) { feed.record(status: paused, from: 0) }
            // Resumed 100,000 frames later (the route discards what was heard first), or 40 s later
            // (more than the 30 s a gap is kept): either way nothing of the pause is held.
            let resume: Int64 = discardsBeforeResuming ? 400_000 : 300_000 + 40 * 44_100
            if discardsBeforeResuming { feed.discardHeard(before: resume) }
            append(feed, 88_200, at: resume, value: 0.5)
            let sent = audio(drain(feed))
            #expect(sent.first?.first == resume && sent.reduce(0) { $0 + Int($1.count) } >= 44_100,
                    "a second in flight at once, not one message and a wait: \(sent.map(\.first))")
        }
    }
}

/// FLAC on the wire: each audio message one block on the group's grid, encoded once for every
/// speaker, decoding to exactly the 16-bit samples, and never a block from before a flush.
@Suite struct SpeakerFeedFLACTests {
    private static let format = AudioStreamFormat(sampleRate: 44_100, channelCount: 2, encoding: .flac)

    /// A chord at 16-bit values: stereo frames `first..<first + count`, a new `seed` a new signal.
    private static func chord(from first: Int64, count: Int, seed: Double) -> [Float] {
        (0..<count).flatMap { index -> [Float] in
            let time = Double(first + Int64(index)) / 44_100
            let left = 0.3 * sin(2 * .pi * 220 * seed * time) + 0.2 * sin(2 * .pi * 331 * time)
            let right = 0.3 * sin(2 * .pi * 277 * seed * time) + 0.1 * sin(2 * .pi * 440 * time)
            return [Float((left * 32_768).rounded() / 32_768), Float((right * 32_768).rounded() / 32_768)]
        }
    }

    private static func append(_ feed: SpeakerFeed, _ samples: [Float], at first: Int64) {
        samples.withUnsafeBufferPointer { feed.append($0, at: first) }
    }

    /// Link `index`'s audio messages until it has nothing more: first frame, frame count, payload.
    private static func drainAudio(_ feed: SpeakerFeed, link index: Int) -> [(first: Int64, count: Int, payload: [UInt8])] {
        var sent: [(Int64, Int, [UInt8])] = []
        while case .messages(let batch) = feed.nextWork(for: index, timeout: 0.01) {
            for case .audio(let first, let count, let payload) in batch { sent.append((first, Int(count), payload)) }
        }
        return sent
    }

    /// The 16-bit samples of a FLAC payload.
    private static func decoded(_ payload: [UInt8], frameCount: Int) throws -> [Float] {
        try FLACBlockDecoder(sampleRate: 44_100, channelCount: 2).decode(payload, frameCount: frameCount).map(AudioStreamFormat.Encoding.floatSample)
    }

    @Test func blocksLieOnTheGroupsGridAreEncodedOnceAndDecodeToTheSamples() throws {
        let feed = try SpeakerFeed(speakerCount: 2, format: Self.format)
        let signal = Self.chord(from: 0, count: 20_000, seed: 1)
        _ = feed.linkDidConnect(0, bufferEndFrame: -1, capacityFrames: 1_000_000, startFrame: 0)
        _ = feed.linkDidConnect(1, bufferEndFrame: -1, capacityFrames: 1_000_000, startFrame: 1_000)
        Self.append(feed, signal, at: 0)
        let first = Self.drainAudio(feed, link: 0), second = Self.drainAudio(feed, link: 1)
        #expect(first.map(\.first) == [0, 4_096, 8_192, 12_288, 16_384] && first.map(\.count) == [4_096, 4_096, 4_096, 4_096, 3_616])
        // A speaker that starts off the grid is sent up to the next boundary, then the same blocks.
        #expect(second.map(\.first) == [1_000, 4_096, 8_192, 12_288, 16_384] && second[0].count == 3_096)
        #expect(zip(first.dropFirst(), second.dropFirst()).allSatisfy { $0.payload == $1.payload }, "one encoding for the group")
        #expect(feed.keptBlockCount == 4, "the whole blocks are kept, the short ones not")
        for message in first + second {
            let expected = Array(signal[Int(message.first) * 2..<(Int(message.first) + message.count) * 2])
            #expect(try Self.decoded(message.payload, frameCount: message.count) == expected, "block at \(message.first)")
        }
        let bytes = first.reduce(0) { $0 + $1.payload.count }
        #expect(bytes * 10 < 20_000 * 4 * 6, "under 60 % of 16-bit PCM: \(bytes) bytes for 20,000 frames")
    }

    @Test func theGroupsSpeakersShareTwoSecondsInFlight() throws {
        // Each link, unanswered, is sent what its share allows, then its next whole block: one
        // speaker two seconds (88,200 frames), each of three two thirds of one (29,400), and each
        // of sixteen half a second (22,050), the least.
        for speakerCount in [1, 3, 16] {
            let feed = try SpeakerFeed(speakerCount: speakerCount, format: Self.format)
            for index in 0..<speakerCount { _ = feed.linkDidConnect(index, bufferEndFrame: -1, capacityFrames: 10_000_000, startFrame: 0) }
            Self.append(feed, Self.chord(from: 0, count: 441_000, seed: 1), at: 0)
            let share = max(22_050, 88_200 / speakerCount)
            for index in 0..<speakerCount {
                let sentEnd = Self.drainAudio(feed, link: index).last.map { $0.first + Int64($0.count) } ?? 0
                #expect(sentEnd >= share && sentEnd <= share + 4_096, "\(speakerCount) speakers: speaker \(index) sent to frame \(sentEnd), not \(share) and a block")
            }
        }
    }

    @Test func aShortBlockAtTheEndOfWhatIsRenderedWaitsUnlessItIsDueSoon() throws {
        let feed = try SpeakerFeed(speakerCount: 2, format: Self.format)
        for index in 0..<2 { _ = feed.linkDidConnect(index, bufferEndFrame: -1, capacityFrames: 10_000_000, startFrame: 0) }
        // Speaker 0 plays at frame 0: frames from 44,100 on are more than a second ahead of it.
        // Speaker 1 plays at 20,000: everything rendered here is due within a second.
        let playing = { (next: Int64) in SpeakerStatus(bufferEndFrame: -1, nextFrame: next, clockOffset: 0, clockUncertainty: 0, isSynchronized: true, isPlaying: true) }
        feed.record(status: playing(0), from: 0)
        feed.record(status: playing(20_000), from: 1)
        // The route renders a period (441 frames) at a time, from 30,000 to 60,870.
        var sent: [[(first: Int64, count: Int, payload: [UInt8])]] = [[], []]
        for period in 0..<70 {
            let first = 30_000 + Int64(period) * 441
            Self.append(feed, Self.chord(from: first, count: 441, seed: 1), at: first)
            for index in 0..<2 { sent[index] += Self.drainAudio(feed, link: index) }
        }
        let ahead = sent[0].filter { $0.first >= 45_056 }
        #expect(ahead.map(\.first) == [45_056, 49_152, 53_248] && ahead.allSatisfy { $0.count == 4_096 },
                "past the due second, whole blocks only: \(sent[0].map { ($0.first, $0.count) })")
        #expect(sent[0].last.map { $0.first + Int64($0.count) } == 57_344, "the block still growing waits")
        #expect(feed.isEveryConnectedSpeakerSent(upTo: 60_870) && !feed.isEveryConnectedSpeakerSent(upTo: 61_440),
                "sent, as far as a whole block can be (the route's fill is reported)")
        #expect(sent[1].last.map { $0.first + Int64($0.count) } == 60_870, "frames due soon go at once, short")
        for index in 0..<2 {
            let frames = sent[index].reduce(0) { $0 + $1.count }
            #expect(Int64(frames) == sent[index].last!.first + Int64(sent[index].last!.count) - 30_000, "contiguous from 30,000 for speaker \(index)")
        }
    }

    @Test func aFlushForgetsTheBlocksFromItsFrameSoTheNewAudioIsSent() throws {
        let feed = try SpeakerFeed(speakerCount: 1, format: Self.format)
        _ = feed.linkDidConnect(0, bufferEndFrame: -1, capacityFrames: 1_000_000, startFrame: 0)
        Self.append(feed, Self.chord(from: 0, count: 16_384, seed: 1), at: 0)
        _ = Self.drainAudio(feed, link: 0)
        #expect(feed.keptBlockCount == 4)
        // An edit at 6,000: what follows is other music.
        let (id, asked) = feed.beginFlush(from: 6_000)
        feed.record(answer: true, firstUnplayedFrame: 0, ofRequest: id, from: 0)
        _ = feed.refusals(of: id, asked: asked, timeout: 1) { false }
        feed.endFlush(from: 6_000, resumingAt: 6_000, refusing: [:])
        #expect(feed.keptBlockCount == 1, "only the block before the flush's frame is kept")
        let replaced = Self.chord(from: 6_000, count: 10_384, seed: 1.5)
        Self.append(feed, replaced, at: 6_000)
        let after = Self.drainAudio(feed, link: 0)
        #expect(after.map(\.first) == [6_000, 8_192, 12_288], "\(after.map(\.first))")
        for message in after {
            let expected = Array(replaced[Int(message.first - 6_000) * 2..<(Int(message.first - 6_000) + message.count) * 2])
            #expect(try Self.decoded(message.payload, frameCount: message.count) == expected, "block at \(message.first): the new music")
        }
    }
}
