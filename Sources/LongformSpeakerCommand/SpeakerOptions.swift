import ArgumentParser
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LongformCommandSupport
import LongformCore
import LongformLocalRouteCatalog
import LongformRoutes
import LongformSpeakerProtocol
import LongformSpeakerReceiver

/// What a network speaker is told on its command line (`longform speaker`, `longform-speaker`),
/// and running it: play what a sender sends to a local route.
public struct SpeakerOptions: ParsableArguments {
    /// The command's one-line summary.
    public static let abstract = "Run a network speaker: hold minutes of a sender's audio and play it, in step, to a local route."

    /// The command's longer help.
    public static let discussion = """
            One sender at a time connects over TCP (docs/speaker-protocol.md); the speaker asks the sender's timing port \
            for its clock and plays each frame at the network time the sender's anchors give, to the local route. \
            --channel left or right plays one channel of the stream, so that two speakers make a stereo pair; \
            --latency-offset delays the output for a device whose latency the speaker cannot measure (an amplifier, a TV). \
            On a route that can take back what it holds (pulse, null) a pause, a seek or a volume is heard within the route's \
            rewind margin; on wav, after the 0.2 s the route is handed ahead. \
            The log shows what plays: title, artist, album, and the cover art's type, size and SHA-256. \
            With --secret-file (or LONGFORM_SPEAKER_SECRET), only senders given the same secret (in their LONGFORM_SPEAKER_SECRET) \
            are heard, and everything on their connection is encrypted (ChaCha20-Poly1305). \
            A connection has 5 s to become the sender (its hello, and its proof with a secret); at most 32 wait at once, \
            a newcomer closing the oldest, so strangers cannot lock a sender out; warnings about connections are \
            logged at most 10 a minute, then counted. \
            SIGINT or SIGTERM stops.
            """

    @Option(name: .long, help: "Address and port to listen on: HOST:PORT, [IPv6]:PORT or PORT.")
    public var listen = "0.0.0.0:7878"

    @Option(name: .long, help: "The speaker's name, told to senders.")
    public var name = ProcessInfo.processInfo.hostName

    @Option(name: .long, help: "null, wav:PATH, pulse[:SINK] or alsa[:DEVICE] (default: PulseAudio, else ALSA, else null).")
    public var route: String?

    @Option(name: .long, help: "Seconds of audio to hold.")
    public var buffer = 180.0

    @Option(name: .long, help: "both, left or right.")
    public var channel = "both"

    @Option(name: .long, help: "Milliseconds to delay the output by, for a device whose latency cannot be measured.")
    public var latencyOffset = 0.0

    @Flag(name: .long, help: "Play the stream's frames unchanged, bit for bit: keep in step by skipping or repeating a frame once surely a frame off the timeline (23 µs at 44.1 kHz, plus the clock's uncertainty), not by resampling.")
    public var bitExact = false

    @Option(name: .long, help: "Sample rate the route plays at, in Hz.")
    public var sampleRate = 44_100

    @Option(name: .long, help: ArgumentHelp("Require senders to know the secret in this file (else in $LONGFORM_SPEAKER_SECRET, if set); their connections are then encrypted.",
                                             valueName: "path"))
    public var secretFile: String?

    @Option(name: .long, help: ArgumentHelp("Directory of what the speaker keeps from one run to the next: its output devices' measured rates, so that it starts in step with rooms already playing (default: $XDG_STATE_HOME/longform or ~/.local/state/longform).",
                                             valueName: "dir"))
    public var state: String?

    @Option(name: .long, help: ArgumentHelp("For tests: run the speaker's clock this many parts per million fast (negative: slow), every reading and the kernel's arrival stamps alike, as though on a crystal of its own.",
                                             valueName: "ppm"))
    public var clockSkew = 0.0

    /// The logging switches.
    @OptionGroup public var logging: LoggingOptions

    /// The options as given (their defaults, until parsed).
    public init() {}

    /// Checks each option, naming the one that is wrong.
    public func validate() throws {
        _ = try ListenAddress(parsing: listen, option: "--listen")
        if let route { _ = try LocalRouteSpecifier(parsing: route) }
        guard SpeakerSession.ChannelSelection(rawValue: channel) != nil else { throw ValidationError("--channel must be both, left or right") }
        guard buffer >= 1 && buffer <= 3_600 else { throw ValidationError("--buffer must be from 1 to 3600 seconds") }
        guard latencyOffset >= 0 && latencyOffset <= 10_000 else { throw ValidationError("--latency-offset must be from 0 to 10000 ms") }
        guard abs(clockSkew) <= 1_000 else { throw ValidationError("--clock-skew must be from -1000 to 1000 ppm") }
    }

    /// Runs the speaker in this process until SIGINT or SIGTERM.
    public func run() throws {
        // Before any thread reads the clock.
        if clockSkew != 0 { HostClock.run(partsPerMillionFast: clockSkew) }
        logging.bootstrap(defaultLevel: .info)
        let address = try ListenAddress(parsing: listen, option: "--listen")
        let specifier = try route.map { try LocalRouteSpecifier(parsing: $0) } ?? RouteCatalog.defaultRoute(fallback: .null)
        let configuration = SpeakerSession.Configuration(name: name, bufferSeconds: buffer, channels: SpeakerSession.ChannelSelection(rawValue: channel)!,
                                                          extraDelay: UInt64(latencyOffset * 1_000_000), isBitExact: bitExact)
        let secret: PairingSecret?
        do {
            if let secretFile {
                secret = try PairingSecret(passphrase: try String(contentsOfFile: secretFile, encoding: .utf8))
            } else {
                secret = try PairingSecret.fromEnvironment()
            }
        } catch {
            throw CommandFailure("cannot use the pairing secret in \(secretFile ?? "$" + PairingSecret.environmentVariable): \(error)")
        }
        let rateMemory = DeviceRateMemory(stateDirectory: state ?? StateDirectory.defaultPath())
        let route = specifier.makeRoute(sampleRate: sampleRate, keepsTime: true, rateMemory: rateMemory)
        let speaker = SpeakerService(configuration: configuration, route: route, pairingSecret: secret)
        let port: Int
        do { port = try speaker.start(host: address.host, port: address.port) } catch {
            throw CommandFailure("cannot listen on \(listen) or play to \(specifier): \(error)")
        }
        let skew = HostClock.partsPerMillionFast == 0 ? "" : String(cFormat: ", its clock %+.1f ppm fast (--clock-skew)", HostClock.partsPerMillionFast)
        // Whole, at once: whoever started the speaker waits for this line (stdout may be a file).
        print("longform: speaker \(name) listening on \(address.host):\(port), playing to \(specifier)\(skew)")
        fflush(nil)
        let done = DispatchSemaphore(value: 0)
        let stopSignals = StopSignals { done.signal() }
        done.wait()
        stopSignals.cancel()
        speaker.stop()
        rateMemory.waitUntilWritten()
    }
}
