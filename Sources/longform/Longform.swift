import ArgumentParser
import LongformCore

/// The `longform` command.
@main
struct Longform: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "longform",
        abstract: "A gapless long-form audio player: render, play, serve, be a network speaker, and list routes.",
        subcommands: [PlayCommand.self, RenderCommand.self, ServeCommand.self, SpeakerCommand.self, RoutesCommand.self]
    )

    /// Tunes the allocator for streaming audio, then parses and runs the command.
    static func main() async {
        AllocatorTuning.keepSampleBuffersMapped()
        await main(nil)
    }
}
