import Foundation
import LongformCore
import LongformSpeakerProtocol
import LongformTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `longform speaker` as a process: what a sender sends over the network comes out of its route
/// (here a WAV file, read back), every sample in order.
@Suite struct SpeakerCommandTests {
    @Test func aSpeakerProcessPlaysWhatTheSenderSendsToItsRoute() throws {
        let speaker = try SpeakerProcess(name: "attic")
        defer { speaker.stop() }
        let speakerPort = speaker.port

        let sender = try TestSender(speakerPort: speakerPort)
        try sender.send(.hello(sessionID: Array(repeating: 7, count: 16), senderName: "cli test", timingPort: sender.timingPort),
                        .format(AudioStreamFormat(sampleRate: 44_100, channelCount: 2, encoding: .signed16)),
                        TestSender.ramp(0, 44_100), .metadata(title: "Ramp", artist: "Tests", album: "Loopback"))
        #expect(sender.waitFor { if case .welcome(let name, _, _) = $0 { name } else { nil } } == "attic")
        Thread.sleep(forTimeInterval: 1.2) // ten clock requests a second: a good estimate within the first few
        try sender.send(.anchor(RateAnchor(rate: 1, mediaFrame: 0, networkTime: HostClock.now() + 200_000_000)))
        Thread.sleep(forTimeInterval: 1.6)
        speaker.stop()
        #expect(speaker.running.process.terminationStatus == 0)
        #expect(speaker.output.contains("now playing Ramp — Tests"))

        // Frame 1 onwards (frame 0 is 0), in one piece. While the speaker corrects its output's
        // drift it resamples (by at most 1,000 ppm) and values round to either side, so single
        // steps of 0 or 2 are no evidence; what is: no step outside 0...2, and the ramp's rise
        // over the piece equal to its frames.
        let played = try RampAudio.played(wav: speaker.outputPath)
        let piece = try #require(played.pieces.first)
        #expect(played.pieces.count == 1 && piece.values.first == 1 && piece.count >= 40_000, "\(played)")
        #expect(piece.isContinuous(tolerance: 2), "\(played)")
    }

    /// `longform speaker` becomes `longform-speaker` (same process, so a service manager's PID
    /// holds), and that program carries neither decoder nor Foundation: its memory goes to its audio.
    @Test func theSpeakerRunsAsItsOwnProgramWithoutFFmpegOrFoundation() throws {
        let speaker = try SpeakerProcess(name: "program")
        defer { speaker.stop() }
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(speaker.running.process.processIdentifier)/exe")
        #expect(URL(fileURLWithPath: executable).lastPathComponent == "longform-speaker", "\(executable)")

        let speakerLibraries = try ExternalTool.check("ldd", [ExternalTool.builtExecutable(named: "longform-speaker")]).output
        let longformLibraries = try ExternalTool.check("ldd", [ExternalTool.longformExecutable]).output
        // Foundation's full library (with its internationalization and ICU, 6 MiB resident) too:
        // the speaker's modules import FoundationEssentials alone.
        for library in ["libavcodec", "libavformat", "libavutil", "libswresample", "libFoundation.so", "libFoundationInternationalization"] {
            #expect(!speakerLibraries.contains(library), "\(speakerLibraries)")
            // The check can fail: the player links them.
            #expect(longformLibraries.contains(library), "\(longformLibraries)")
        }
        // The routes a speaker plays to are all there.
        for library in ["libpulse", "libasound"] { #expect(speakerLibraries.contains(library), "\(speakerLibraries)") }
    }
}
