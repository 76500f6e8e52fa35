import Foundation
import LongformCore
import LongformRendering

/// A list of playlist edits, each applied when the output reaches a time: what a user did,
/// written down to be replayed (`longform render --script EDITS.json`). The JSON is an array of
/// objects with `at` (seconds of output) and `op`:
///
///     {"at": 5.0, "op": "remove", "index": 1}
///     {"at": 9.0, "op": "insert", "index": 2, "item": "/path/or/url"}
///     {"at": 12.0, "op": "move", "from": 2, "to": 0}
///     {"at": 15.0, "op": "replace", "index": 1, "item": "..."}
///     {"at": 20.0, "op": "seek", "offset": 3.5}                  (within the current item)
///     {"at": 20.0, "op": "seek", "index": 2, "offset": 0}
///     {"at": 30.0, "op": "next"}    {"at": 31.0, "op": "previous"}
///     {"at": 40.0, "op": "pause", "for": 2.0}
///     {"at": 50.0, "op": "route-change"}
///
/// Indices count from 0 in the playlist as it stands when the edit applies.
public struct EditScript: Sendable, Equatable {
    /// One edit and when it applies.
    public struct Edit: Sendable, Equatable, CustomStringConvertible {
        /// Seconds of output (frames written divided by the output rate) at which it applies.
        public var time: Double
        /// What it does.
        public var operation: Operation

        /// `operation` at `time` seconds of output.
        public init(time: Double, operation: Operation) {
            self.time = time
            self.operation = operation
        }

        /// `"remove 1 at 5.0 s"`.
        public var description: String { "\(operation) at \(time) s" }
    }

    /// What an edit does.
    public enum Operation: Sendable, Equatable, CustomStringConvertible {
        case remove(index: Int)
        case insert(index: Int, item: String)
        case move(from: Int, to: Int)
        case replace(index: Int, item: String)
        /// Within the current item when `index` is nil.
        case seek(index: Int?, offset: Double)
        case next
        case previous
        /// Pauses, and plays again after `seconds` of output.
        case pause(seconds: Double)
        /// The route is flushed under the renderer, as when the device changes.
        case routeChange

        /// The edit as the JSON names it: `"remove 1"`, `"seek 2 at 3.5 s"`.
        public var description: String {
            switch self {
            case .remove(let index): "remove \(index)"
            case .insert(let index, let item): "insert \(item) at \(index)"
            case .move(let from, let to): "move \(from) to \(to)"
            case .replace(let index, let item): "replace \(index) with \(item)"
            case .seek(let index?, let offset): "seek to item \(index) at \(offset) s"
            case .seek(nil, let offset): "seek to \(offset) s"
            case .next: "next"
            case .previous: "previous"
            case .pause(let seconds): "pause for \(seconds) s"
            case .routeChange: "route-change"
            }
        }
    }

    /// Why a script could not be read; names the file and the edit.
    public struct ReadError: Error, CustomStringConvertible, Sendable {
        /// `"edits.json: edit 3: "op" "jump" is not one of …"`.
        public var description: String
    }

    /// The edits, in the order they apply (by time; edits at the same time in the file's order).
    public var edits: [Edit]

    /// A script of `edits`.
    public init(edits: [Edit]) {
        self.edits = edits.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }

    /// Reads the JSON file at `path`.
    public init(contentsOfFile path: String) throws(ReadError) {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ReadError(description: "\(path): cannot read the file (\(error.localizedDescription))")
        }
        try self.init(json: data, name: path)
    }

    /// Reads a script from JSON bytes; `name` names it in errors.
    public init(json data: Data, name: String = "script") throws(ReadError) {
        let parsed: Any
        do { parsed = try JSONSerialization.jsonObject(with: data) } catch {
            throw ReadError(description: "\(name): not valid JSON (\(error.localizedDescription))")
        }
        guard let list = parsed as? [Any] else { throw ReadError(description: "\(name): expected a JSON array of edits") }
        var edits: [Edit] = []
        for (position, element) in list.enumerated() {
            do throws(ReadError) {
                edits.append(try Self.edit(from: element))
            } catch {
                throw ReadError(description: "\(name): edit \(position + 1): \(error.description)")
            }
        }
        self.init(edits: edits)
    }

    private static func edit(from element: Any) throws(ReadError) -> Edit {
        guard let object = element as? [String: Any] else { throw ReadError(description: "expected an object") }
        func number(_ key: String) throws(ReadError) -> Double {
            guard let value = (object[key] as? NSNumber)?.doubleValue, value.isFinite else {
                throw ReadError(description: "\"\(key)\" must be a number")
            }
            return value
        }
        func index(_ key: String) throws(ReadError) -> Int {
            let value = try number(key)
            guard value >= 0, value == value.rounded(), value < 1e9 else { throw ReadError(description: "\"\(key)\" must be a whole number ≥ 0, not \(value)") }
            return Int(value)
        }
        func string(_ key: String) throws(ReadError) -> String {
            guard let value = object[key] as? String, !value.isEmpty else { throw ReadError(description: "\"\(key)\" must be a non-empty string") }
            return value
        }
        let time = try number("at")
        guard time >= 0 else { throw ReadError(description: "\"at\" must be ≥ 0, not \(time)") }
        guard let op = object["op"] as? String else { throw ReadError(description: "\"op\" is missing") }
        let operation: Operation
        switch op {
        case "remove": operation = .remove(index: try index("index"))
        case "insert": operation = .insert(index: try index("index"), item: try string("item"))
        case "move": operation = .move(from: try index("from"), to: try index("to"))
        case "replace": operation = .replace(index: try index("index"), item: try string("item"))
        case "seek":
            let offset = try number("offset")
            guard offset >= 0 else { throw ReadError(description: "\"offset\" must be ≥ 0, not \(offset)") }
            operation = .seek(index: object["index"] == nil ? nil : try index("index"), offset: offset)
        case "next": operation = .next
        case "previous": operation = .previous
        case "pause":
            let seconds = try number("for")
            guard seconds > 0 else { throw ReadError(description: "\"for\" must be > 0, not \(seconds)") }
            operation = .pause(seconds: seconds)
        case "route-change": operation = .routeChange
        default:
            throw ReadError(description: "\"op\" \"\(op)\" is not one of remove, insert, move, replace, seek, next, previous, pause, route-change")
        }
        return Edit(time: time, operation: operation)
    }

    /// Applies one edit to `player` now. A pause's resumption is the caller's to schedule.
    public static func apply(_ operation: Operation, to player: SampleBufferPlayer) throws {
        switch operation {
        case .remove(let index): try player.remove(at: index)
        case .insert(let index, let item): try player.insert(PlaylistItem(location: item), at: index)
        case .move(let from, let to): try player.move(from: from, to: to)
        case .replace(let index, let item): try player.replace(at: index, with: PlaylistItem(location: item))
        case .seek(let index?, let offset): try player.seek(toItemAt: index, offset: MediaTime(seconds: offset, preferredTimescale: 1_000_000))
        case .seek(nil, let offset): try player.seek(to: MediaTime(seconds: offset, preferredTimescale: 1_000_000))
        case .next: player.next()
        case .previous: player.previous()
        case .pause: player.pause()
        case .routeChange: try player.reconfigureRoute()
        }
    }
}
