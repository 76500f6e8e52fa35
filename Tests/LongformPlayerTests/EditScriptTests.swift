import Foundation
import LongformPlayer
import Testing

/// Reading edit scripts: every op of the issue, the order edits apply in, and each kind of bad
/// input named with the edit it is in.
@Suite struct EditScriptTests {
    func read(_ json: String) throws(EditScript.ReadError) -> EditScript { try EditScript(json: Data(json.utf8), name: "edits.json") }

    func error(_ json: String) -> String {
        do {
            _ = try read(json)
            return ""
        } catch {
            return error.description
        }
    }

    @Test func everyOperationIsRead() throws {
        let script = try read("""
            [{"at": 5.0, "op": "remove", "index": 1}, {"at": 9.0, "op": "insert", "index": 2, "item": "/a.flac"},
             {"at": 12.0, "op": "move", "from": 2, "to": 0}, {"at": 15.0, "op": "replace", "index": 1, "item": "http://h/b.mp3"},
             {"at": 20.0, "op": "seek", "offset": 3.5}, {"at": 20.0, "op": "seek", "index": 2, "offset": 0},
             {"at": 30.0, "op": "next"}, {"at": 31.0, "op": "previous"}, {"at": 40.0, "op": "pause", "for": 2.0},
             {"at": 50.0, "op": "route-change"}]
            """)
        #expect(script.edits.map(\.operation) == [
            .remove(index: 1), .insert(index: 2, item: "/a.flac"), .move(from: 2, to: 0), .replace(index: 1, item: "http://h/b.mp3"),
            .seek(index: nil, offset: 3.5), .seek(index: 2, offset: 0), .next, .previous, .pause(seconds: 2), .routeChange,
        ])
    }

    @Test func editsApplyByTimeAndInFileOrderAtOneTime() throws {
        let script = try read(#"[{"at": 2, "op": "next"}, {"at": 1, "op": "previous"}, {"at": 2, "op": "route-change"}]"#)
        #expect(script.edits.map(\.operation) == [.previous, .next, .routeChange])
    }

    @Test func badInputNamesTheEditAndTheField() {
        #expect(error("{}") == "edits.json: expected a JSON array of edits")
        #expect(error("[1]") == "edits.json: edit 1: expected an object")
        #expect(error(#"[{"at": 1}]"#) == "edits.json: edit 1: \"op\" is missing")
        #expect(error(#"[{"at": -1, "op": "next"}]"#) == "edits.json: edit 1: \"at\" must be ≥ 0, not -1.0")
        #expect(error(#"[{"at": "soon", "op": "next"}]"#) == "edits.json: edit 1: \"at\" must be a number")
        #expect(error(#"[{"at": 1, "op": "next"}, {"at": 1, "op": "remove", "index": 1.5}]"#) == "edits.json: edit 2: \"index\" must be a whole number ≥ 0, not 1.5")
        #expect(error(#"[{"at": 1, "op": "insert", "index": 0}]"#) == "edits.json: edit 1: \"item\" must be a non-empty string")
        #expect(error(#"[{"at": 1, "op": "pause"}]"#) == "edits.json: edit 1: \"for\" must be a number")
        #expect(error(#"[{"at": 1, "op": "pause", "for": 0}]"#) == "edits.json: edit 1: \"for\" must be > 0, not 0.0")
        #expect(error(#"[{"at": 1, "op": "seek", "offset": -2}]"#) == "edits.json: edit 1: \"offset\" must be ≥ 0, not -2.0")
        #expect(error("[{").hasPrefix("edits.json: not valid JSON"))
    }
}
