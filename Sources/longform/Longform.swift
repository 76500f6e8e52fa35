import ArgumentParser

/// The `longform` command.
@main
struct Longform: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "longform",
        abstract: "A gapless long-form audio player: render, play, serve, be a network speaker, and list routes.",
        subcommands: [PlayCommand.self, RenderCommand.self, ServeCommand.self, SpeakerCommand.self, RoutesCommand.self]
    )
}
