import ArgumentParser
import LongformCore
import LongformSpeakerCommand

/// `longform-speaker`: the network speaker alone, without the player's decoders (FFmpeg), server
/// or store, so that a small machine holding minutes of audio keeps its memory for the audio.
/// `longform speaker` runs this program when it is installed beside `longform`.
@main
struct LongformSpeaker: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "longform-speaker", abstract: SpeakerOptions.abstract, discussion: SpeakerOptions.discussion)

    @OptionGroup var options: SpeakerOptions

    func run() throws { try options.run() }
}
