import LongformTestSupport

/// What must be heard when a playlist of coded items is played from its first item and edited at
/// given output frames: a plain simulation of the player's rules, frame by frame, that the
/// rendered output is compared with.
struct PlaylistModel {
    /// One playlist entry. `serial` tells apart two entries of the same file.
    struct Item: Equatable {
        var serial: Int
        var code: Int
        var frames: Int
        /// False for an item whose file is missing: it is skipped.
        var isPlayable: Bool
    }

    /// An edit, with offsets in frames.
    enum Operation: Equatable {
        case remove(Int)
        case insert(Int, Item)
        case move(Int, Int)
        case replace(Int, Item)
        case seek(index: Int?, frames: Int)
        case next
        case previous
        case pause
        case play
        case routeChange
    }

    private(set) var playlist: [Item]
    private var current: Int?
    private var offset = 0
    private var isPaused = false
    private(set) var output: [CodedAudio.Frame] = []
    /// How many edits were refused (an index outside the playlist).
    private(set) var refusals = 0

    init(playlist: [Item]) {
        self.playlist = playlist
        current = playlist.isEmpty ? nil : 0
        settle()
    }

    /// Plays, applying each operation when the output reaches its frame (in the given order for
    /// equal frames), until the playlist ends; returns what was heard.
    static func heard(playing playlist: [Item], with operations: [(frame: Int, operation: Operation)]) -> (frames: [CodedAudio.Frame], refusals: Int) {
        var model = PlaylistModel(playlist: playlist)
        for (frame, operation) in operations {
            model.advance(to: frame)
            guard model.current != nil else { break }
            model.apply(operation)
        }
        model.advance(to: .max)
        return (model.output, model.refusals)
    }

    private mutating func advance(to target: Int) {
        while output.count < target, let index = current {
            if isPaused {
                precondition(target != .max, "the model would pause forever")
                output.append(contentsOf: repeatElement(.silence, count: target - output.count))
                return
            }
            let item = playlist[index]
            let count = min(item.frames - offset, target - output.count)
            output.append(contentsOf: (offset..<(offset + count)).map { CodedAudio.Frame.item(code: item.code, frame: $0) })
            offset += count
            settle()
        }
    }

    /// Moves past an item that is over or cannot play, to the next that can; ends after the last.
    private mutating func settle() {
        while let index = current, !playlist[index].isPlayable || offset >= playlist[index].frames {
            offset = 0
            current = index + 1 < playlist.count ? index + 1 : nil
        }
    }

    private mutating func start(at index: Int, offset newOffset: Int) {
        current = index
        offset = newOffset
        settle()
    }

    private mutating func apply(_ operation: Operation) {
        guard let index = current else { return }
        switch operation {
        case .remove(let position):
            guard playlist.indices.contains(position) else { return refusals += 1 }
            playlist.remove(at: position)
            if position == index {
                if position < playlist.count { start(at: position, offset: 0) } else { current = nil }
            } else if position < index {
                current = index - 1
            }
        case .insert(let position, let item):
            guard (0...playlist.count).contains(position) else { return refusals += 1 }
            playlist.insert(item, at: position)
            if position <= index { current = index + 1 }
        case .move(let from, let to):
            guard playlist.indices.contains(from), playlist.indices.contains(to) else { return refusals += 1 }
            let playing = playlist[index].serial
            playlist.insert(playlist.remove(at: from), at: to)
            current = playlist.firstIndex { $0.serial == playing }
        case .replace(let position, let item):
            guard playlist.indices.contains(position) else { return refusals += 1 }
            playlist[position] = item
            if position == index { start(at: position, offset: 0) }
        case .seek(nil, let frames):
            start(at: index, offset: frames)
        case .seek(let position?, let frames):
            guard playlist.indices.contains(position) else { return refusals += 1 }
            start(at: position, offset: frames)
        case .next:
            if index + 1 < playlist.count { start(at: index + 1, offset: 0) } else { current = nil }
        case .previous:
            start(at: max(index - 1, 0), offset: 0)
        case .pause:
            isPaused = true
        case .play:
            isPaused = false
        case .routeChange:
            break
        }
    }
}
