import Foundation
import LongformCore
import LongformPlayer
import LongformRendering
import LongformSources

/// The one path by which the commands play items: a renderer on the route, a synchronizer, a queue player.
enum Playback {
    struct Outcome {
        var frames: Int64
        var failures: [SourceError]
    }

    /// Plays `items` to `route` until the last has been heard; reports failures on standard error.
    static func run(items: [String], route: any AudioRoute, lookAhead: Double?, announce: Bool) throws -> Outcome {
        let renderer = AudioRenderer(route: route)
        if let lookAhead { renderer.lookAheadDuration = lookAhead }
        let synchronizer = RenderSynchronizer()
        try synchronizer.addRenderer(renderer)
        let player = QueuePlayer(items: items, renderer: renderer, synchronizer: synchronizer) { event in
            switch event {
            case .itemStarted(let index, let location, let metadata, _):
                guard announce else { return }
                let title = metadata.title ?? URL(fileURLWithPath: location).lastPathComponent
                let artist = metadata.artist.map { " — \($0)" } ?? ""
                let duration = metadata.duration.isNumeric ? String(format: " [%d:%02d]", Int(metadata.duration.seconds) / 60, Int(metadata.duration.seconds) % 60) : ""
                print("▶ \(index + 1)/\(items.count) \(title)\(artist)\(duration)")
            case .itemFailed(let index, let error):
                FileHandle.standardError.write(Data("longform: item \(index + 1) skipped: \(error)\n".utf8))
            case .finished:
                break
            }
        }
        player.play()
        player.waitUntilFinished()
        synchronizer.removeRenderer(renderer, at: .invalid)
        return Outcome(frames: route.clock.framesRendered, failures: player.failures)
    }
}
