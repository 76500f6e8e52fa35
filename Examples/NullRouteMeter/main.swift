// The smallest program on the engine, and the proof of the module split: plays the files named
// on its command line to the null route, in real time, and prints the peak level of every second
// it renders. It needs no device, so it links neither libpulse, libasound nor swift-crypto
// (`NullRouteMeterTests` checks the binary).
import Foundation
import Logging
import LongformPlayer
import LongformRendering
import LongformRoutes
import Synchronization

let files = CommandLine.arguments.dropFirst()
guard !files.isEmpty, !files.contains(where: { $0.hasPrefix("-") }) else {
    FileHandle.standardError.write(Data("usage: longform-null-meter FILE...\n  Plays FILEs to the null route and prints each second's peak level.\n".utf8))
    exit(64)
}

/// Each second's peak level, printed as `second N: peak P` when the next second begins.
final class PeakMeter: Sendable {
    private let sampleRate: Int
    /// The second being measured and its peak so far (a rewind's frames count again, which a peak allows).
    private let state = Mutex<(second: Int64, peak: Float)>((0, 0))

    init(sampleRate: Int) { self.sampleRate = sampleRate }

    /// Takes a rendered period that starts at route frame `firstFrame`.
    func add(_ samples: UnsafeBufferPointer<Float>, firstFrame: Int64) {
        let second = firstFrame / Int64(sampleRate)
        let peak = samples.reduce(Float(0)) { max($0, abs($1)) }
        state.withLock { state in
            if second > state.second {
                Self.report(state)
                state = (second, 0)
            }
            state.peak = max(state.peak, peak)
        }
    }

    /// Prints the last second.
    func finish() { state.withLock { Self.report($0) } }

    private static func report(_ state: (second: Int64, peak: Float)) {
        print("second \(state.second): peak \(String(format: "%.3f", state.peak))")
    }
}

// Only warnings and errors, on standard error: standard output is the meter's.
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .warning
    return handler
}
let meter = PeakMeter(sampleRate: 44_100)
let route = NullRoute(sampleRate: 44_100, channelCount: 2) { firstFrame, _, samples in meter.add(samples, firstFrame: firstFrame) }
let engine = PlaybackEngine(route: route, readsTagsAhead: false)
let outcome = try PlaylistRun.run(files.map { PlaylistItem(location: $0) }, on: engine)
meter.finish()
for failure in outcome.failures { FileHandle.standardError.write(Data("longform-null-meter: \(failure)\n".utf8)) }
exit(outcome.failures.isEmpty ? 0 : 1)
