import Foundation
import LongformTestSupport
import Testing

/// `longform render --script`: a playlist of real music files edited while it renders, through the
/// command line, checked on the samples it wrote.
@Suite struct RenderScriptTests {
    /// Three FLAC items of 1.5 s with different sweeps, and their reference samples (16-bit).
    static func items() throws -> [(flac: String, samples: [Int32])] {
        try [260, 520, 780].map { frequency in
            let reference = try TestAudio.reference("script-\(frequency)", seconds: 1.5, startFrequency: frequency)
            return (try TestAudio.encode(reference, as: "flac", arguments: ["-c:a", "flac"]), try WAVFileReader(path: reference).integerSamples)
        }
    }

    static func render(_ items: [String], script: String) throws -> (ExternalTool.Result, [Int32]) {
        let scriptPath = TestAudio.path("script-\(UUID().uuidString).json")
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let output = TestAudio.path("script-\(UUID().uuidString).wav")
        let result = try ExternalTool.run(ExternalTool.longformExecutable, ["render", "-o", output, "--lookahead", "60", "--script", scriptPath] + items)
        return (result, (try? WAVFileReader(path: output).integerSamples) ?? [])
    }

    @Test func editsApplyAtTheirExactOutputFrames() throws {
        let items = try Self.items()
        // At 0.5 s: the next item goes (it is enqueued already); at 1.0 s a seek back to 0.25 s in
        // the current item; at 2.0 s (item 3 at 0.25 s) the route changes under the renderer.
        let script = #"[{"at": 0.5, "op": "remove", "index": 1}, {"at": 1.0, "op": "seek", "offset": 0.25}, {"at": 2.0, "op": "route-change"}]"#
        let (result, written) = try Self.render(items.map(\.flac), script: script)
        #expect(result.status == 0, "\(result.errorOutput)")
        let frame = { (seconds: Double) in Int((seconds * 44_100).rounded()) * 2 }
        let expected = Array(items[0].samples[..<frame(1.0)]) + Array(items[0].samples[frame(0.25)...]) + items[2].samples
        #expect(written.count == expected.count, "\(written.count / 2) frames, expected \(expected.count / 2)")
        #expect(mismatch(written[...], expected) == nil)
        #expect(result.output.contains("wrote"), "\(result.output)")
    }

    @Test func aBadScriptIsRefusedBeforeAnythingPlays() throws {
        let items = try Self.items().map(\.flac)
        let (unknown, unknownOutput) = try Self.render(items, script: #"[{"at": 1, "op": "next"}, {"at": 2, "op": "jump"}]"#)
        #expect(unknown.status != 0 && unknown.errorOutput.contains("edit 2") && unknown.errorOutput.contains("\"jump\""), "\(unknown.errorOutput)")
        #expect(unknownOutput.isEmpty)
        let (broken, _) = try Self.render(items, script: #"[{"at": 1, "op": "remove"]"#)
        #expect(broken.status != 0 && broken.errorOutput.contains("not valid JSON"), "\(broken.errorOutput)")
        let (missing, _) = try Self.render(items, script: #"[{"op": "remove", "index": 0}]"#)
        #expect(missing.status != 0 && missing.errorOutput.contains("\"at\" must be a number"), "\(missing.errorOutput)")
    }

    @Test func anEditTheListCannotTakeIsNamedAndTheRestPlays() throws {
        let items = try Self.items()
        let (result, written) = try Self.render(items.map(\.flac), script: #"[{"at": 0.5, "op": "move", "from": 0, "to": 7}]"#)
        #expect(result.status == 1)
        #expect(result.errorOutput.contains("edit 1 (move 0 to 7 at 0.5 s) refused: index 7 is outside the playlist (3 items)"), "\(result.errorOutput)")
        #expect(mismatch(written[...], items[0].samples + items[1].samples + items[2].samples) == nil)
    }
}
