import Foundation

/// Rooms on one PulseAudio sample clock, for tests that compare what outputs played: a 6-channel
/// null sink that does not rewind (its monitor is a faithful listener) and a stereo remap sink per
/// room on two of its channels (aux channels, which PulseAudio neither upmixes nor downmixes);
/// unloaded when released. Its monitor, recorded by one `MonitorRecording`, shows every room's
/// output frame against every other's.
public final class PulseAudioRooms {
    /// The server the modules are loaded on.
    public let server: String
    /// The 6-channel sink.
    public let sink = "rooms_\(UUID().uuidString.prefix(8))"
    /// The sink's channel map, for the recording.
    public let channelMap = (0..<6).map { "aux\($0)" }.joined(separator: ",")
    /// The rooms' names, in channel order (three at most).
    public let names: [String]
    private var modules: [String] = []

    /// Frames per window the rooms are compared in: 100 ms.
    public static let window = 4_410
    /// The ramp's period (see `RampAudio`).
    public static let period = 16_384

    /// Loads the sink and a room for each of `names` on `server`.
    public init(server: String, names: [String]) throws {
        precondition(names.count <= 3, "three stereo rooms fit the six channels")
        self.server = server
        self.names = names
        try load(["module-null-sink", "sink_name=\(sink)", "rate=44100", "channels=6", "channel_map=\(channelMap)", "norewinds=1"])
        for (index, name) in names.enumerated() {
            try load(["module-remap-sink", "sink_name=\(room(name))", "master=\(sink)", "channels=2", "remix=no",
                      "master_channel_map=aux\(2 * index),aux\(2 * index + 1)", "channel_map=front-left,front-right"])
        }
    }

    /// The sink of room `name`.
    public func room(_ name: String) -> String { "\(sink)-\(name)" }

    private func load(_ arguments: [String]) throws {
        let loaded = try ExternalTool.check("pactl", ["--server", server, "load-module"] + arguments)
        modules.append(loaded.output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    deinit {
        for module in modules.reversed() { _ = try? ExternalTool.run("pactl", ["--server", server, "unload-module", module]) }
    }

    /// What the rooms played, per window from the first sound in any room: each room's phase (the
    /// ramp's frame less the recorded frame, in frames) or nil where it was silent.
    public static func phases(of samples: [Int32], roomCount: Int) -> [[Int?]] {
        let channels = 2 * roomCount, frames = samples.count / channels
        guard let first = (0..<frames).first(where: { frame in (0..<roomCount).contains { samples[frame * channels + 2 * $0] != 0 } }) else { return [] }
        return stride(from: first, to: frames - window + 1, by: window).map { start in
            (0..<roomCount).map { room -> Int? in
                let values = (start..<(start + window)).map { samples[$0 * channels + 2 * room] }
                // Silent: more than a tenth of the window (the ramp itself is 0 once a period).
                guard values.filter({ $0 == 0 }).count < window / 10 else { return nil }
                // About the window's first phase, so that one across the ramp's wrap is not split in two.
                let reference = Int(values[0]) - start
                let around = values.enumerated().map { centered(Int($0.element) - ($0.offset + start) - reference) }.sorted()
                return ((reference + around[around.count / 2]) % period + period) % period
            }
        }
    }

    /// `difference` brought within half the ramp's period of 0.
    public static func centered(_ difference: Int) -> Int {
        ((difference % period) + period + period / 2) % period - period / 2
    }
}
