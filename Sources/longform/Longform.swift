import ArgumentParser

/// The `longform` command.
@main
struct Longform: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "longform",
        abstract: "A gapless long-form audio player: render, play, serve and list routes.",
        subcommands: [PlayCommand.self, RenderCommand.self, ServeCommand.self, RoutesCommand.self]
    )
}
