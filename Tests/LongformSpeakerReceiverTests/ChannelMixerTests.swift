import LongformSpeakerReceiver
import Testing

/// The stream's channels into the output's, with the channel selection and the gain.
@Suite struct ChannelMixerTests {
    /// Two stereo frames: left 1, 2; right -1, -2.
    static let stereo: [Float] = [1, -1, 2, -2]

    @Test func bothChannelsPlayAtTheGain() {
        let mixer = ChannelMixer(selection: .both, gain: 0.5)
        #expect(mixer.mix(Self.stereo, channels: 2, after: 0, frameCount: 2, outputChannels: 2) == [0.5, -0.5, 1, -1])
    }

    @Test func aMonoStreamFillsEveryOutputChannel() {
        let mixer = ChannelMixer(selection: .both, gain: 1)
        #expect(mixer.mix([3, 4], channels: 1, after: 0, frameCount: 2, outputChannels: 2) == [3, 3, 4, 4])
    }

    @Test func oneOfAPairPlaysInItsOwnPlaceAndTheOtherIsSilent() {
        #expect(ChannelMixer(selection: .left, gain: 1).mix(Self.stereo, channels: 2, after: 0, frameCount: 2, outputChannels: 2) == [1, 0, 2, 0])
        #expect(ChannelMixer(selection: .right, gain: 1).mix(Self.stereo, channels: 2, after: 0, frameCount: 2, outputChannels: 2) == [0, -1, 0, -2])
        // A mono stream's one channel is both sides'; a mono output has no right side.
        #expect(ChannelMixer(selection: .right, gain: 1).mix([3, 4], channels: 1, after: 0, frameCount: 2, outputChannels: 2) == [0, 3, 0, 4])
        #expect(ChannelMixer(selection: .right, gain: 1).mix(Self.stereo, channels: 2, after: 0, frameCount: 2, outputChannels: 1) == [0, 0])
    }

    @Test func silenceComesBeforeAndAfterTheFrames() {
        let mixer = ChannelMixer(selection: .both, gain: 1)
        #expect(mixer.mix(Self.stereo, channels: 2, after: 1, frameCount: 4, outputChannels: 2) == [0, 0, 1, -1, 2, -2, 0, 0])
    }
}
