import Foundation
import LongformCore
import LongformPlayer
import LongformRendering
import LongformRoutes
import LongformTestSupport
import Synchronization

/// Plays coded items through the real player on the as-fast-as-possible WAV route (Float32 mono
/// at the coded rate, a 60 s look-ahead so that edits land on audio already enqueued), applies
/// edits at exact output frames, and reads back what came out.
enum ScriptedRun {
    /// The edits of a run, with offsets and times in frames.
    typealias Edit = (frame: Int, operation: PlaylistModel.Operation)

    static let missingPath = "/nonexistent/longform-missing.flac"
    private static let counter = Atomic<Int>(0)

    /// Where an item's audio is.
    static func location(of item: PlaylistModel.Item) throws -> String {
        item.isPlayable ? try CodedAudio.item(item.code, frames: item.frames) : missingPath
    }

    /// The script for `edits`: each pause resumes at the next `.play` the caller listed for it.
    static func script(for edits: [Edit]) throws -> EditScript {
        let rate = Double(CodedAudio.sampleRate)
        var scripted: [EditScript.Edit] = []
        var pending = edits
        while !pending.isEmpty {
            let (frame, operation) = pending.removeFirst()
            let seconds = Double(frame) / rate
            let converted: EditScript.Operation
            switch operation {
            case .remove(let index): converted = .remove(index: index)
            case .insert(let index, let item): converted = .insert(index: index, item: try location(of: item))
            case .move(let from, let to): converted = .move(from: from, to: to)
            case .replace(let index, let item): converted = .replace(index: index, item: try location(of: item))
            case .seek(let index, let frames): converted = .seek(index: index, offset: Double(frames) / rate)
            case .next: converted = .next
            case .previous: converted = .previous
            case .routeChange: converted = .routeChange
            case .pause:
                // The script's pause carries its own resumption: the first `.play` listed after it.
                guard let resume = pending.firstIndex(where: { $0.operation == .play }) else { preconditionFailure("a pause without a play") }
                converted = .pause(seconds: Double(pending.remove(at: resume).frame - frame) / rate)
            case .play:
                preconditionFailure("a play without a pause")
            }
            scripted.append(EditScript.Edit(time: seconds, operation: converted))
        }
        return EditScript(edits: scripted)
    }

    /// What the player rendered for `playlist` edited by `edits`, and the edits it refused.
    static func render(_ playlist: [PlaylistModel.Item], edits: [Edit], lookAhead: Double = 60) throws -> (frames: [CodedAudio.Frame], refused: [String]) {
        let path = TestAudio.path("scripted-\(counter.add(1, ordering: .relaxed).newValue).wav")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let route = WAVFileRoute(path: path, sampleRate: CodedAudio.sampleRate, channelCount: 1, sampleFormat: .f32, pacing: .asFastAsPossible, lookAhead: lookAhead)
        let items = try playlist.map { PlaylistItem(location: try location(of: $0)) }
        let outcome = try PlaylistRun.run(items, on: PlaybackEngine(route: route, readsTagsAhead: false), script: try script(for: edits))
        let wav = try WAVFileReader(path: path)
        return (CodedAudio.frames(of: wav.samples), outcome.refusedEdits)
    }

    /// Renders and compares with the model; returns a description of the first difference, or nil.
    static func check(_ playlist: [PlaylistModel.Item], edits: [Edit], lookAhead: Double = 60) throws -> String? {
        let expected = PlaylistModel.heard(playing: playlist, with: edits)
        let actual = try render(playlist, edits: edits, lookAhead: lookAhead)
        if actual.refused.count != expected.refusals {
            return "refused \(actual.refused.count) edits, expected \(expected.refusals): \(actual.refused)"
        }
        let common = min(actual.frames.count, expected.frames.count)
        guard let first = (0..<common).first(where: { actual.frames[$0] != expected.frames[$0] })
            ?? (actual.frames.count == expected.frames.count ? nil : common) else { return nil }
        let from = max(first - 2, 0)
        return """
            output differs from frame \(first) (\(actual.frames.count) frames, expected \(expected.frames.count))
              heard:    \(CodedAudio.summary(actual.frames[min(from, actual.frames.count)...].prefix(12)))
              expected: \(CodedAudio.summary(expected.frames[min(from, expected.frames.count)...].prefix(12)))
              whole:    \(CodedAudio.summary(actual.frames[...]))
              model:    \(CodedAudio.summary(expected.frames[...]))
            """
    }
}

extension PlaylistModel.Item {
    /// A playable coded item.
    static func coded(_ code: Int, frames: Int, serial: Int? = nil) -> Self {
        Self(serial: serial ?? code, code: code, frames: frames, isPlayable: true)
    }

    /// An entry whose file is missing.
    static func missing(serial: Int) -> Self {
        Self(serial: serial, code: 0, frames: 0, isPlayable: false)
    }
}
