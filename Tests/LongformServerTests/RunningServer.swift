import Foundation
import LongformTestSupport

/// A `longform serve` process with a music directory of its own (three items of 3 s, two tagged,
/// one with cover art) and a fresh state directory, reached through `HTTPTestClient`. Playing to the null route;
/// PulseAudio runs so that the route picker has a real server's sinks to offer.
final class RunningServer: @unchecked Sendable {
    let process: ServeProcess
    let client: HTTPTestClient
    let musicDirectory: String
    let stateDirectory: String
    var port: Int { process.port }
    var token: String? { process.token }

    /// The cover art embedded in `cover.mp3`, as PNG bytes.
    static func coverBytes() throws -> [UInt8] {
        let path = TestAudio.path("cover.png")
        if !FileManager.default.fileExists(atPath: path) {
            try ExternalTool.check("ffmpeg", ["-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "color=c=orange:s=64x64", "-frames:v", "1", path])
        }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// A music directory: `album/one.flac` (title "One", artist "Ann"), `album/two.flac`
    /// (untagged) and `cover.mp3` (title "Cover", with a PNG picture), each `seconds` long.
    static func makeMusicDirectory(_ name: String, seconds: Double) throws -> String {
        let directory = TestAudio.path("music-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: directory + "/album", withIntermediateDirectories: true)
        let reference = try TestAudio.reference("server-ref-\(Int(seconds))", seconds: seconds, startFrequency: 330)
        try ExternalTool.check("ffmpeg", ["-nostdin", "-loglevel", "error", "-y", "-i", reference, "-metadata", "title=One", "-metadata", "artist=Ann",
                                          "-c:a", "flac", directory + "/album/one.flac"])
        try ExternalTool.check("ffmpeg", ["-nostdin", "-loglevel", "error", "-y", "-i", reference, "-c:a", "flac", directory + "/album/two.flac"])
        _ = try coverBytes()
        try ExternalTool.check("ffmpeg", ["-nostdin", "-loglevel", "error", "-y", "-i", reference, "-i", TestAudio.path("cover.png"),
                                          "-map", "0:a", "-map", "1:v", "-c:a", "libmp3lame", "-c:v", "copy", "-disposition:v", "attached_pic",
                                          "-metadata", "title=Cover", "-id3v2_version", "3", directory + "/cover.mp3"])
        return directory
    }

    /// Starts a server; `host` 0.0.0.0 makes it ask for a token (reached through 127.0.0.1 all the same).
    init(_ name: String, host: String = "127.0.0.1", isWatching: Bool = true, itemSeconds: Double = 3) throws {
        _ = try PulseAudioServer.start()
        musicDirectory = try Self.makeMusicDirectory(name, seconds: itemSeconds)
        stateDirectory = TestAudio.path("serve-state-\(name)-\(UUID().uuidString.prefix(8))")
        process = try ServeProcess(state: stateDirectory, music: musicDirectory, host: host, extraArguments: isWatching ? [] : ["--no-watch"])
        client = HTTPTestClient(port: process.port, token: process.token)
    }

    deinit { process.kill() }

    /// The library's tracks by title or file name, once the first scan has found all three.
    func libraryIDs() throws -> [String: Int64] {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let tracks = try client.get("/api/library").json["tracks"] as? [[String: Any]] ?? []
            if tracks.count >= 3 || Date() > deadline {
                var ids: [String: Int64] = [:]
                for track in tracks {
                    let name = (track["title"] as? String) ?? ((track["path"] as? String).map { ($0 as NSString).lastPathComponent } ?? "")
                    ids[name] = (track["id"] as? NSNumber)?.int64Value
                }
                return ids
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// The playlist's item ids, in order.
    func playlistIDs() throws -> [String] {
        (try client.get("/api/playlist").json["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    /// Polls `GET /api/state` until `condition` holds (at most `timeout` seconds); returns the last state.
    @discardableResult
    func waitForState(timeout: Double = 5, _ condition: ([String: Any]) -> Bool) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        var state = try client.get("/api/state").json
        while !condition(state) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            state = try client.get("/api/state").json
        }
        return state
    }
}
