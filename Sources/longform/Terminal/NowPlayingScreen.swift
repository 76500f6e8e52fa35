import Foundation
import LongformCore
import LongformPlayer

/// The terminal player's screen as text: the current item's title and artist, a progress bar
/// with elapsed and total time, the playlist around the current item, and the keys.
struct NowPlayingScreen {
    var routeName: String
    var entries: [SampleBufferPlayer.Entry]
    var currentIndex: Int?
    var offset: MediaTime?
    var state: PlaybackState
    /// Rows of the playlist shown around the current item.
    var playlistRows = 9
    /// Characters in the progress bar.
    var barWidth = 40

    /// The lines to draw, top to bottom.
    var lines: [String] {
        var lines = ["longform — \(routeName)", ""]
        let stateWord = switch state {
        case .playing: "▶ playing"
        case .paused: "❚❚ paused"
        case .stopped: "■ stopped"
        }
        if let index = currentIndex, entries.indices.contains(index) {
            let item = entries[index].item
            lines.append("\(stateWord)  \(index + 1)/\(entries.count)")
            lines.append("  \(item.displayTitle)")
            lines.append("  \(item.artist ?? "")")
            let elapsed = max(offset?.seconds ?? 0, 0)
            let total = item.duration?.seconds
            let fraction = total.map { $0 > 0 ? min(elapsed / $0, 1) : 0 } ?? 0
            let filled = Int((fraction * Double(barWidth)).rounded(.down))
            let bar = String(repeating: "=", count: filled) + String(repeating: "-", count: barWidth - filled)
            lines.append("  \(Self.clock(elapsed)) [\(bar)] \(total.map(Self.clock) ?? "--:--")")
        } else {
            lines += ["\(stateWord)", "", "", ""]
        }
        lines.append("")
        let center = currentIndex ?? 0
        let first = max(0, min(center - playlistRows / 2, entries.count - playlistRows))
        for index in first..<min(entries.count, first + playlistRows) {
            let marker = index == currentIndex ? "▶" : " "
            let failed = entries[index].failure.map { "  (failed: \($0.kind.rawValue))" } ?? ""
            lines.append(" \(marker) \(String(index + 1).leftPadded(to: 3))  \(entries[index].item.displayTitle)\(failed)")
        }
        lines.append("")
        lines.append("space pause/resume · n next · p previous · ←/→ seek 10 s · q quit")
        return lines
    }

    /// `"03:07"`, or `"1:02:03"` past an hour.
    static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.down))
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, secs) : String(format: "%02d:%02d", minutes, secs)
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
