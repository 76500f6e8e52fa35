import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The keys the terminal player answers to.
enum PlayerKey: Equatable {
    case togglePause, next, previous, seekForward, seekBackward, quit
}

/// The terminal in raw mode (no echo, no line buffering) while the player runs, read key by key on
/// a thread of its own; the previous mode comes back on `restore()`.
final class TerminalInput: @unchecked Sendable {
    private var saved = termios()
    private var isRaw = false

    /// Whether standard input and output are both a terminal.
    static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    /// Switches to raw mode and calls `handler` with each key, from a background thread.
    func start(_ handler: @escaping @Sendable (PlayerKey) -> Void) {
        if tcgetattr(STDIN_FILENO, &saved) == 0 {
            var raw = saved
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            withUnsafeMutableBytes(of: &raw.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            isRaw = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0
        }
        let thread = Thread {
            var parser = KeyParser()
            var byte: UInt8 = 0
            while read(STDIN_FILENO, &byte, 1) == 1 {
                if let key = parser.feed(byte) { handler(key) }
            }
        }
        thread.name = "longform.terminal.input"
        thread.start()
    }

    /// Puts the terminal back as it was.
    func restore() {
        guard isRaw else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
        isRaw = false
    }
}

/// Turns the bytes a terminal sends into keys: letters, space, and the arrows' escape sequences.
struct KeyParser {
    private var pending: [UInt8] = []

    /// The key `byte` completes, if any.
    mutating func feed(_ byte: UInt8) -> PlayerKey? {
        if !pending.isEmpty || byte == 0x1B {
            pending.append(byte)
            // ESC [ C and ESC [ D (also ESC O C / ESC O D in application cursor mode).
            if pending.count == 3 {
                defer { pending.removeAll() }
                guard pending[1] == UInt8(ascii: "[") || pending[1] == UInt8(ascii: "O") else { return nil }
                switch pending[2] {
                case UInt8(ascii: "C"): return .seekForward
                case UInt8(ascii: "D"): return .seekBackward
                default: return nil
                }
            }
            if pending.count == 2 && pending[1] != UInt8(ascii: "[") && pending[1] != UInt8(ascii: "O") { pending.removeAll() }
            return nil
        }
        switch byte {
        case UInt8(ascii: " "): return .togglePause
        case UInt8(ascii: "n"), UInt8(ascii: "N"): return .next
        case UInt8(ascii: "p"), UInt8(ascii: "P"): return .previous
        case UInt8(ascii: "q"), UInt8(ascii: "Q"), 0x03: return .quit
        default: return nil
        }
    }
}
