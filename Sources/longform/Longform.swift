import ArgumentParser

/// The `longform` command.
@main
struct Longform: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "longform",
        abstract: "A gapless long-form audio player: render, play and list routes.",
        subcommands: [PlayCommand.self, RenderCommand.self, RoutesCommand.self]
    )
}
