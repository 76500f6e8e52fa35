import Foundation
import LongformCore
@testable import LongformPulseAudio
import LongformTestSupport
import Testing

/// The PulseAudio stream against a real server: what libpulse refuses must not end it.
@Suite(.serialized) struct PulseStreamTests {
    /// libpulse keeps a slot for each timing request in flight and refuses a 33rd with "Internal
    /// error". Writes that come faster than the server answers (a busy machine, a route catching
    /// up) each asked for one, and the next request the route waits for, at a flush or a rewind,
    /// was refused: the route's thread ended and its room fell silent for good.
    @Test func writesFasterThanTheServerAnswersLeaveRoomForTheTimingTheRouteWaitsFor() throws {
        _ = try PulseAudioServer.start()
        // To the shared sink: its 0.1-level writes on the recorded one (a suite running beside
        // PulseAudioRouteTests) were mixed into what that suite's recordings heard.
        let format = AudioFormat(sampleRate: 44_100, channelCount: 2)
        let stream = try PulseStream(route: "pulse:test", sink: PulseAudioServer.sharedSinkName, format: format, requestSeconds: 0.25,
                                     sinkLatencySeconds: 0.025, playsThroughFlushes: true)
        let block = [Float](repeating: 0.1, count: 64 * format.channelCount)
        // 200 writes of 64 frames in a row: each takes microseconds, an answer takes longer.
        try block.withUnsafeBufferPointer { samples in
            for _ in 0..<200 { try stream.write(samples) }
        }
        let frame = try stream.readFrame()
        #expect(frame >= 0 && frame <= 200 * 64)
        let resume = try stream.flushAndWait()
        #expect(resume >= frame)
    }
}
