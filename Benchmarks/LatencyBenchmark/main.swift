// longform-latency: the time from a player command to the first sample of its effect coming out
// of the route, for `scripts/bench`. Usage:
//
//     longform-latency null|pulse:SINK ITEM_A ITEM_B [TRIALS]
//
// The items are made by the bench script: 16-bit stereo whose every left sample in second s of
// item k (1 for A, 2 for B) is k × 1000 + 10 × s, so that the first sample of an effect is
// recognised by its value, and whose right sample of the second's frame f is f − 22050, so that
// the first frame of an effect that comes out tells how many of its first frames did not. On the null route
// the route's own monitor gives the time each frame is heard; on PulseAudio, `parec` records the
// sink's monitor and each frame is timed by when its chunk arrives (the same method the script uses
// for mpd). Prints one JSON object: per command, the milliseconds of each trial ("play") and the
// effect's first frames each trial's recording lacks ("play_skipped").
import Foundation
import LongformCore
import LongformPlayer
import LongformRendering
import LongformPulseAudio
import LongformRoutes
import Synchronization

/// Watches the audio coming out of the route for the first frame, heard at or after a time, whose
/// left sample satisfies a predicate, and reads from its samples how many frames of the effect came before it.
final class Listener: @unchecked Sendable {
    private struct Watch {
        var after: UInt64
        var predicate: @Sendable (Int16) -> Bool
        var heardAt: UInt64?
        /// The left sample of the second the effect starts with (nil: the start of the item heard).
        var origin: Int16?
        var skippedFrames: Int?
    }
    /// The right sample of a second's frame f is f − frameCodeOffset.
    static let frameCodeOffset = 22_050
    private let watch = Mutex<Watch?>(nil)
    private let found = DispatchSemaphore(value: 0)
    let sampleRate: Int

    init(sampleRate: Int) { self.sampleRate = sampleRate }

    /// Audio that came out: `left` and `right` samples, the first heard at `firstHeardAt` and the
    /// others one frame apart, or all at that time unless `spread`.
    func hear(left: UnsafeBufferPointer<Int16>, right: UnsafeBufferPointer<Int16>, firstHeardAt: UInt64, spread: Bool = true) {
        let matched = watch.withLock { watch -> Bool in
            guard var current = watch, current.heardAt == nil else { return false }
            for (index, sample) in left.enumerated() {
                let time = firstHeardAt + (spread ? UInt64(index) * 1_000_000_000 / UInt64(sampleRate) : 0)
                if time >= current.after && current.predicate(sample) {
                    current.heardAt = time
                    // Whole seconds past the effect's first one, then frames into this one.
                    current.skippedFrames = (Int(left[index]) - Int(current.origin ?? left[index] / 1000 * 1000)) / 10 * sampleRate + Int(right[index]) + Self.frameCodeOffset
                    watch = current
                    return true
                }
            }
            return false
        }
        if matched { found.signal() }
    }

    /// Runs `command`; the milliseconds until the first matching frame is heard, and how many
    /// frames of the effect came before it (the effect starts at frame 0 of the second whose left
    /// sample is `origin`; nil: the start of the item heard), or nil.
    func measure(_ predicate: @escaping @Sendable (Int16) -> Bool, from origin: Int16?, _ command: () throws -> Void) rethrows -> (milliseconds: Double, skippedFrames: Int)? {
        let start = HostClock.now()
        watch.withLock { $0 = Watch(after: start, predicate: predicate, origin: origin) }
        try command()
        let result = found.wait(timeout: .now() + 5) == .success ? watch.withLock { $0 } : nil
        watch.withLock { $0 = nil }
        guard let heardAt = result?.heardAt, let skipped = result?.skippedFrames else { return nil }
        return (Double(Int64(heardAt) - Int64(start)) / 1_000_000, skipped)
    }
}

/// Records a PulseAudio sink's monitor with parec and times every frame by its arrival.
final class MonitorRecorder: @unchecked Sendable {
    private let process = Process()
    /// Frames parec has delivered (a class, so that the reading thread can share it).
    private final class Count: Sendable { let frames = Atomic<Int>(0) }
    private let received = Count()

    init(sink: String, listener: Listener) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/parec")
        process.arguments = ["-d", sink + ".monitor", "--format=s16le", "--rate=\(listener.sampleRate)", "--channels=2", "--raw", "--latency-msec=5"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let reader = pipe.fileHandleForReading
        let received = received
        let thread = Thread {
            var pending = Data()
            while true {
                let chunk = reader.availableData
                let arrived = HostClock.now()
                if chunk.isEmpty { return }
                pending.append(chunk)
                let frames = pending.count / 4
                guard frames > 0 else { continue }
                var left = [Int16](repeating: 0, count: frames), right = left
                pending.withUnsafeBytes { bytes in
                    for frame in 0..<frames {
                        left[frame] = bytes.loadUnaligned(fromByteOffset: frame * 4, as: Int16.self)
                        right[frame] = bytes.loadUnaligned(fromByteOffset: frame * 4 + 2, as: Int16.self)
                    }
                }
                pending.removeFirst(frames * 4)
                received.frames.add(frames, ordering: .relaxed)
                // Every frame counts as out when its chunk arrived (the bench script times mpd the same way).
                left.withUnsafeBufferPointer { left in
                    right.withUnsafeBufferPointer { listener.hear(left: left, right: $0, firstHeardAt: arrived, spread: false) }
                }
            }
        }
        thread.start()
    }

    /// Waits until parec delivers `seconds` of audio: its stream, like any new one on this
    /// machine's PulseAudio, can take a second to start, and a backlog would time frames late.
    func waitUntilCapturing(seconds: Double, sampleRate: Int) {
        let deadline = Date(timeIntervalSinceNow: 10)
        while received.frames.load(ordering: .relaxed) < Int(seconds * Double(sampleRate)) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
    FileHandle.standardError.write(Data("usage: longform-latency null|pulse:SINK ITEM_A ITEM_B [TRIALS]\n".utf8))
    exit(2)
}
let routeName = arguments[1], itemA = arguments[2], itemB = arguments[3]
let trials = arguments.count > 4 ? Int(arguments[4]) ?? 5 : 5
let sampleRate = 44_100
let listener = Listener(sampleRate: sampleRate)
let route: any AudioRoute
var recorder: MonitorRecorder?
if routeName == "null" {
    route = NullRoute(sampleRate: sampleRate, channelCount: 2) { _, heardAt, samples in
        func channel(_ first: Int) -> [Int16] { stride(from: first, to: samples.count, by: 2).map { Int16(clamping: Int(samples[$0] * 32_768)) } }
        let left = channel(0), right = channel(1)
        left.withUnsafeBufferPointer { left in right.withUnsafeBufferPointer { listener.hear(left: left, right: $0, firstHeardAt: heardAt) } }
    }
} else if routeName.hasPrefix("pulse:") {
    let sink = String(routeName.dropFirst("pulse:".count))
    route = PulseAudioRoute(sink: sink, sampleRate: sampleRate, channelCount: 2)
    recorder = try MonitorRecorder(sink: sink, listener: listener)
} else {
    FileHandle.standardError.write(Data("longform-latency: route must be null or pulse:SINK\n".utf8))
    exit(2)
}

let engine = PlaybackEngine(route: route)
let player = engine.player
try engine.start()
player.append([PlaylistItem(location: itemA), PlaylistItem(location: itemB)])
// A new stream on this machine's PulseAudio can take a second to start; it starts here, not in a
// trial, and so does the recorder's.
player.play()
recorder?.waitUntilCapturing(seconds: 1, sampleRate: sampleRate)
Thread.sleep(forTimeInterval: 2)

func isItem(_ code: Int) -> @Sendable (Int16) -> Bool { { (code * 1000..<(code * 1000 + 600)).contains(Int($0)) } }
var results: [String: [Double]] = [:]
/// One trial's result under `command` ("play": milliseconds, "play_skipped": the effect's first frames lacking).
@MainActor func record(_ command: String, _ heard: (milliseconds: Double, skippedFrames: Int)?) {
    guard let heard else { return }
    results[command, default: []].append((heard.milliseconds * 10).rounded() / 10)
    results[command + "_skipped", default: []].append(Double(heard.skippedFrames))
}
for _ in 0..<trials {
    player.stop()
    Thread.sleep(forTimeInterval: 0.5)
    record("play", listener.measure({ $0 != 0 }, from: nil, { player.play() }))
    Thread.sleep(forTimeInterval: 1)
    try player.seek(toItemAt: 0)
    Thread.sleep(forTimeInterval: 1)
    record("next", listener.measure(isItem(2), from: 2000, { player.next() }))
    Thread.sleep(forTimeInterval: 0.5)
    try player.seek(toItemAt: 0)
    Thread.sleep(forTimeInterval: 1)
    record("seek", try listener.measure({ $0 == 1200 }, from: 1200, { try player.seek(to: MediaTime(value: 20, timescale: 1)) }))
    Thread.sleep(forTimeInterval: 0.5)
    try player.seek(toItemAt: 0)
    Thread.sleep(forTimeInterval: 1)
    record("remove", try listener.measure(isItem(2), from: 2000, { try player.remove(at: 0) }))
    try player.insert(PlaylistItem(location: itemA), at: 0)
    Thread.sleep(forTimeInterval: 0.5)
}
engine.stop()
recorder?.stop()
let json = try JSONSerialization.data(withJSONObject: results, options: [.sortedKeys])
print(String(decoding: json, as: UTF8.self))
