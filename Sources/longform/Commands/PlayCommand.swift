import ArgumentParser
import Foundation
import LongformCommandSupport
import LongformCore
import LongformLocalRouteCatalog
import LongformPlayer
import LongformRendering
import LongformRouteCatalog
import LongformSpeakerSender
import LongformStore

/// `longform play`: the terminal player.
struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play items in real time, gapless, as a playlist you can steer from the terminal.",
        discussion: """
            Items are files, directories (their audio files, recursively, in name order), .m3u/.m3u8 playlists or http(s) URLs. \
            On a terminal the screen shows the current item, its progress and the playlist; keys: space pause/resume, n next, \
            p previous, ←/→ seek 10 s, q quit. Without a terminal, a line is printed per item. The playlist and where it is are \
            saved in the state directory; started again without items, it resumes there. \
            Without --route, plays to PulseAudio if a server runs, else ALSA's default device, else the WAV file longform-play.wav \
            (named on standard error).
            """
    )

    @Option(name: .long, help: "null, wav:PATH, pulse[:SINK], alsa[:DEVICE], speaker:HOST:PORT[,HOST:PORT...][?codec=flac|pcm|float] or airplay:NAME|HOST[:PORT][,...][?password=TEXT], or both in one group (speaker:...,airplay:..., docs/route-groups.md) (see `longform routes`; the codec is how audio goes to the speakers, FLAC by default; speakers that require pairing get the secret in $LONGFORM_SPEAKER_SECRET; speakers ask for the clock on a free UDP port, or $LONGFORM_SPEAKER_TIMING_PORT; AirPlay receivers are named as `longform routes` lists them or by address, on port 5000 unless told or announced, and get the password in $LONGFORM_AIRPLAY_PASSWORD unless the route gives one).")
    var route: String?

    @Option(name: .long, help: "Sample rate the route plays at, in Hz.")
    var sampleRate = 44_100

    @Option(name: .long, help: "Seconds of audio to keep enqueued ahead of the playhead, and sent ahead to network speakers (default: the route's; 180 for speakers).")
    var lookahead: Double?

    @Option(name: .long, help: "Directory of the saved playlist and position (default: $XDG_STATE_HOME/longform or ~/.local/state/longform).")
    var state: String?

    @Option(name: .long, help: "Volume, 0 to 1 (linear gain; on network speakers, the group's, applied as they play).")
    var volume: Float = 1

    @Option(name: .long, help: ArgumentHelp("One network speaker's or AirPlay receiver's own volume, 0 to 1, on top of --volume; repeat for others.", valueName: "HOST:PORT=VOLUME"))
    var speakerVolume: [String] = []

    @OptionGroup var logging: LoggingOptions

    @Argument(help: "Files, directories, .m3u playlists or http(s) URLs; none to resume the saved playlist.")
    var items: [String] = []

    func validate() throws {
        if let lookahead, lookahead <= 0 { throw ValidationError("--lookahead must be positive") }
        guard PlayerSettings.isValidVolume(volume) else { throw ValidationError("--volume \(volume) is outside 0...1") }
        let specifier = try route.map { try RouteSpecifier(parsing: $0) }
        _ = try speakerVolumes(of: specifier)
    }

    /// `--speaker-volume` as volumes by the route's name for each speaker or receiver; each names one of them.
    private func speakerVolumes(of specifier: RouteSpecifier?) throws -> [String: Float] {
        guard !speakerVolume.isEmpty else { return [:] }
        guard let names = specifier?.memberNames else {
            throw ValidationError("--speaker-volume is for a speaker: or airplay: route (--route speaker:HOST:PORT,...)")
        }
        var volumes: [String: Float] = [:]
        for text in speakerVolume {
            guard let equals = text.lastIndex(of: "="), let volume = Float(text[text.index(after: equals)...]), PlayerSettings.isValidVolume(volume) else {
                throw ValidationError("--speaker-volume \(text): expected HOST:PORT=VOLUME, the volume from 0 to 1")
            }
            // As the route names it: `HOST:PORT` for a speaker, `NAME` or `HOST[:PORT]` for a receiver.
            let name = SpeakerEndpoint(parsing: text[..<equals])?.description ?? String(text[..<equals])
            guard names.contains(name) else {
                throw ValidationError("--speaker-volume \(text): \(name) is not one of the route's speakers (\(names.joined(separator: ", ")))")
            }
            volumes[name] = volume
        }
        return volumes
    }

    func run() throws {
        let isInteractive = TerminalInput.isInteractive
        // On the full-screen player, log lines would tear the screen: warnings only, unless asked.
        logging.bootstrap(defaultLevel: isInteractive ? .warning : .info)
        let store: PlayerStateStore
        do { store = try PlayerStateStore(directory: state ?? PlayerStateStore.defaultDirectory()) } catch {
            throw CommandFailure("cannot use the saved state: \(error)")
        }
        let expansion = ItemExpansion.expand(items)
        // A bad argument or playlist entry is named and skipped; the others play (exit status 1 at the end).
        for problem in expansion.problems { FileHandle.standardError.write(Data("longform: \(problem)\n".utf8)) }
        let expanded = expansion.items
        if !items.isEmpty && expanded.isEmpty { throw CommandFailure("no audio files in \(items.joined(separator: ", "))") }
        let saved = expanded.isEmpty ? try loadSaved(from: store) : nil

        let specifier = try route.map { try RouteSpecifier(parsing: $0) } ?? .local(RouteCatalog.defaultRoute(fallback: .wav(path: "longform-play.wav")))
        if route == nil { FileHandle.standardError.write(Data("longform: playing to \(specifier)\n".utf8)) }
        let audioRoute = specifier.makeRoute(sampleRate: sampleRate, lookAhead: lookahead)
        let engine = PlaybackEngine(route: audioRoute, lookAheadDuration: lookahead, volume: volume)
        engine.groupRoute?.setVolumes(byMemberName: try speakerVolumes(of: specifier))
        try engine.start()
        let player = engine.player
        let session = PlayerSession(player: player, store: store, routeName: audioRoute.name, isInteractive: isInteractive)
        if let saved {
            player.restore(saved.entries, currentIndex: saved.currentIndex ?? 0, offset: saved.currentIndex == nil ? .zero : saved.offset,
                           isPlaying: saved.playbackState != .paused)
        } else {
            player.append(expanded.map { PlaylistItem(location: $0) })
            player.play()
        }
        let failures = session.run()
        engine.stop()
        if failures > 0 || !expansion.problems.isEmpty { throw ExitCode(1) }
    }

    private func loadSaved(from store: PlayerStateStore) throws -> PlayerStateStore.State {
        let saved: PlayerStateStore.State?
        do { saved = try store.load() } catch { throw CommandFailure("cannot read the saved state: \(error)") }
        guard let saved, !saved.entries.isEmpty else {
            throw CommandFailure("nothing to play: name items (no saved playlist in \(store.path))")
        }
        return saved
    }
}
