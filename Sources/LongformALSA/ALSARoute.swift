import CALSA
import Logging
import LongformCore
import LongformRendering
import LongformRoutes

/// Plays to an ALSA PCM device (`default`, `hw:0,0`, `plughw:1`…). The clock is the frames written
/// minus the device's reported delay.
public final class ALSARoute: AudioRoute, @unchecked Sendable {
    public let name: String
    public let format: AudioFormat
    public let pacing = RoutePacing.realTime
    public let preferredLookAhead: Double
    public let clock: RouteClock
    /// The ALSA device name.
    public let device: String
    private let thread = RestartableRouteThread()
    private let logger = Logger(label: LogLabel.route)

    /// A route to ALSA device `device`.
    public init(device: String = "default", sampleRate: Int = 44_100, channelCount: Int = 2, lookAhead: Double = 4) {
        self.device = device
        self.name = "alsa:" + device
        self.format = AudioFormat(sampleRate: sampleRate, channelCount: channelCount)
        self.preferredLookAhead = lookAhead
        self.clock = RouteClock(sampleRate: sampleRate)
    }

    public func start(pullingFrom source: any RouteRenderSource) throws(RouteError) {
        let pcm = try ALSAPCM(route: name, device: device, format: format)
        let format = format, clock = clock, logger = logger, name = name
        thread.start(name: "longform.route.alsa", clock: clock) { thread in
            let period = format.sampleRate / 100
            var buffer = [Float](repeating: 0, count: period * format.channelCount)
            var frame: Int64 = 0
            while !thread.shouldStop {
                _ = buffer.withUnsafeMutableBufferPointer { source.render(into: $0, frameCount: period, atRouteFrame: frame) }
                do {
                    try pcm.write(buffer, frames: period)
                } catch {
                    logger.error("\(name): \(error)")
                    break
                }
                frame += Int64(period)
                clock.noteFramesRendered(frame)
                clock.update(frame: frame - pcm.delayFrames(), heardAtHostTime: HostClock.now())
            }
        }
    }

    /// Stops pulling; see `AudioRoute.stop(waiting:)`.
    public func stop(waiting: Bool = true) { thread.stop(waiting: waiting) }

    /// Whether `device` can be opened for playback now.
    public static func canOpen(device: String) -> Bool {
        longform_alsa_silence_errors()
        var handle: OpaquePointer?
        guard snd_pcm_open(&handle, device, SND_PCM_STREAM_PLAYBACK, Int32(SND_PCM_NONBLOCK)) == 0, let handle else { return false }
        snd_pcm_close(handle)
        return true
    }
}

/// Owns an open ALSA playback PCM and closes it in `deinit`.
final class ALSAPCM: @unchecked Sendable {
    private let handle: OpaquePointer
    private let route: String

    init(route: String, device: String, format: AudioFormat) throws(RouteError) {
        self.route = route
        longform_alsa_silence_errors()
        var pcm: OpaquePointer?
        var status = snd_pcm_open(&pcm, device, SND_PCM_STREAM_PLAYBACK, 0)
        guard status == 0, let pcm else { throw RouteError(route: route, reason: String(cString: snd_strerror(status))) }
        handle = pcm
        status = snd_pcm_set_params(pcm, SND_PCM_FORMAT_FLOAT_LE, SND_PCM_ACCESS_RW_INTERLEAVED, UInt32(format.channelCount), UInt32(format.sampleRate), 1, 100_000)
        if status < 0 { throw RouteError(route: route, reason: String(cString: snd_strerror(status))) }
    }

    deinit {
        snd_pcm_drain(handle)
        snd_pcm_close(handle)
    }

    /// Writes interleaved frames, recovering from an underrun once.
    func write(_ samples: [Float], frames: Int) throws(RouteError) {
        var written = samples.withUnsafeBytes { snd_pcm_writei(handle, $0.baseAddress, snd_pcm_uframes_t(frames)) }
        if written < 0 {
            _ = snd_pcm_recover(handle, Int32(written), 1)
            written = samples.withUnsafeBytes { snd_pcm_writei(handle, $0.baseAddress, snd_pcm_uframes_t(frames)) }
        }
        if written < 0 { throw RouteError(route: route, reason: String(cString: snd_strerror(Int32(written)))) }
    }

    /// Frames written but not yet heard.
    func delayFrames() -> Int64 {
        var delay: snd_pcm_sframes_t = 0
        return snd_pcm_delay(handle, &delay) == 0 ? Int64(delay) : 0
    }
}
