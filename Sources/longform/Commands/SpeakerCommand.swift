import ArgumentParser
import Foundation
import LongformSpeakerCommand
#if canImport(Glibc)
import Glibc
#endif

/// `longform speaker`: a network speaker that plays what a sender sends to a local route. It
/// becomes `longform-speaker` (same process, same arguments) when that program is beside this
/// one, so that the speaker does not carry the player's decoders; else it runs here.
struct SpeakerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "speaker", abstract: SpeakerOptions.abstract, discussion: SpeakerOptions.discussion)

    /// The program `longform speaker` becomes, found beside the running `longform`.
    static let programName = "longform-speaker"

    @OptionGroup var options: SpeakerOptions

    func run() throws {
        let arguments = CommandLine.arguments
        if arguments.count >= 2, arguments[1] == Self.configuration.commandName,
           let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let program = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(Self.programName).path
            if FileManager.default.isExecutableFile(atPath: program) {
                let argv = ([program] + arguments.dropFirst(2)).map { strdup($0) } + [nil]
                execv(program, argv)
                // Only on failure: run here instead.
                argv.forEach { free($0) }
            }
        }
        try options.run()
    }
}
