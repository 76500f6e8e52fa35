import Foundation
import FuzzSupport
import LongformPlayer

/// The edit-script reader (`render --script`) against any bytes. Invariants: it reads a script or
/// throws a ReadError that names it; a script's edits are in time order.
enum EditScriptFuzzer {
    static func run(_ bytes: [UInt8]) {
        do {
            let script = try EditScript(json: Data(bytes), name: "fuzz")
            FuzzInput.require(zip(script.edits, script.edits.dropFirst()).allSatisfy { $0.time <= $1.time }, "\(script.edits)")
        } catch {
            FuzzInput.require(error.description.hasPrefix("fuzz"), error.description)
        }
    }
}

/// Runs under libFuzzer or replays saved inputs (see `FuzzInput`).
@main struct EditScriptFuzzerMain {
    static func main() { FuzzInput.main(EditScriptFuzzer.run) }
}
