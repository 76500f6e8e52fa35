/// The stream's channels into the output's: all of them (a stream with fewer channels than the
/// output repeats its last), or one of a pair in its own place (the other channels silent), each
/// sample times the speaker's gain.
public struct ChannelMixer: Sendable, Equatable {
    /// Which of the stream's channels are played.
    public var selection: SpeakerSession.ChannelSelection
    /// The factor every sample is played at: the speaker's volume times its group's.
    public var gain: Float

    /// A mixer playing `selection` at `gain`.
    public init(selection: SpeakerSession.ChannelSelection, gain: Float) {
        self.selection = selection
        self.gain = gain
    }

    /// `frameCount` output frames of `outputChannels` channels: `silentFrames` of silence, then
    /// `frames` (interleaved, `channels` per frame), then silence to the end.
    public func mix(_ frames: [Float], channels: Int, after silentFrames: Int, frameCount: Int, outputChannels: Int) -> [Float] {
        var output = [Float](repeating: 0, count: frameCount * outputChannels)
        let count = frames.count / channels
        if selection == .both && channels == outputChannels {
            // Every channel in its place: one multiply per sample, in a loop the compiler vectorises.
            output.withUnsafeMutableBufferPointer { output in
                frames.withUnsafeBufferPointer { frames in
                    let target = silentFrames * outputChannels
                    for index in 0..<(count * channels) { output[target + index] = frames[index] * gain }
                }
            }
            return output
        }
        for frame in 0..<count {
            let source = frame * channels
            let target = (silentFrames + frame) * outputChannels
            switch selection {
            case .both:
                for channel in 0..<outputChannels { output[target + channel] = frames[source + min(channel, channels - 1)] * gain }
            case .left:
                output[target] = frames[source] * gain
            case .right:
                if outputChannels > 1 { output[target + 1] = frames[source + min(1, channels - 1)] * gain }
            }
        }
        return output
    }
}
