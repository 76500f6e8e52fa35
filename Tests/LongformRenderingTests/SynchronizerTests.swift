import Dispatch
import Foundation
import LongformCore
import LongformRendering
import LongformRoutes
import LongformTestSupport
import Synchronization
import Testing

/// The synchronizer on real clocks: the host clock and the null route's.
@Suite(.serialized) struct SynchronizerTests {
    typealias H = RenderingHarness

    final class Counter: Sendable {
        let counts = Mutex<[MediaTime: Int]>([:])
        func add(_ time: MediaTime) { counts.withLock { $0[time, default: 0] += 1 } }
        subscript(_ time: MediaTime) -> Int { counts.withLock { $0[time] ?? 0 } }
        var total: Int { counts.withLock { $0.values.reduce(0, +) } }
    }

    @Test func boundariesFireOnceEachAlsoWhenTimeJumpsOverThem() throws {
        let synchronizer = RenderSynchronizer()
        let counter = Counter()
        let times = [0.05, 0.10, 0.15, 1.0, 2.0].map { MediaTime(seconds: $0, preferredTimescale: 1000) }
        let token = synchronizer.addBoundaryTimeObserver(forTimes: times, queue: DispatchQueue(label: "test")) { counter.add($0) }
        synchronizer.setRate(1, time: .zero)
        Thread.sleep(forTimeInterval: 0.3)
        for time in times.prefix(3) { #expect(counter[time] == 1, "\(time)") }
        #expect(counter[times[3]] == 0)
        synchronizer.setRate(1, time: MediaTime(value: 3, timescale: 1)) // jumps over 1 s and 2 s
        Thread.sleep(forTimeInterval: 0.2)
        for time in times { #expect(counter[time] == 1, "\(time) fired \(counter[time]) times") }
        synchronizer.removeTimeObserver(token)
    }

    @Test func periodicObserversFireAtTheirInterval() throws {
        let synchronizer = RenderSynchronizer()
        let counter = Counter()
        let token = synchronizer.addPeriodicTimeObserver(forInterval: MediaTime(value: 50, timescale: 1000), queue: DispatchQueue(label: "test")) { counter.add($0) }
        synchronizer.setRate(1, time: .zero)
        Thread.sleep(forTimeInterval: 1.0)
        synchronizer.removeTimeObserver(token)
        let count = counter.total
        #expect((17...24).contains(count), "\(count) periodic calls in 1 s at a 50 ms interval")
    }

    @Test func pauseAndResumeLoseAndRepeatNothing() throws {
        let heard = HeardAudio(channelCount: 2)
        // A 20 ms margin, which the route's thread meets also on a loaded machine: a late rewind
        // would repeat what was heard meanwhile, and this test checks every frame.
        let route = NullRoute(rewindMarginSeconds: 0.02, monitor: { firstFrame, _, samples in heard.record(firstFrame: firstFrame, samples: samples) })
        let renderer = AudioRenderer(route: route)
        let synchronizer = RenderSynchronizer()
        try synchronizer.addRenderer(renderer)
        renderer.enqueue(H.ramp(fromFrame: 0, frames: 44_100 * 2))
        synchronizer.setRate(1, time: .zero)
        Thread.sleep(forTimeInterval: 0.4)
        synchronizer.setRate(0, time: .invalid)
        Thread.sleep(forTimeInterval: 0.05)
        let pausedAt = synchronizer.currentTime()
        Thread.sleep(forTimeInterval: 0.3)
        #expect(synchronizer.currentTime() == pausedAt, "the timeline moved while paused")
        #expect(abs(pausedAt.seconds - 0.4) < 0.06, "paused at \(pausedAt.seconds)")
        synchronizer.setRate(1, time: .invalid)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(abs(synchronizer.currentTime().seconds - pausedAt.seconds - 0.3) < 0.06)
        synchronizer.setRate(0, time: .invalid)
        synchronizer.removeRenderer(renderer, at: .invalid)
        let samples = heard.samples
        let values = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }.filter { $0 != 0 }
        // Every frame from 1 on exactly once, in order: nothing lost, nothing repeated.
        #expect(values.count > 20_000)
        do { let holds = values.enumerated().allSatisfy { $0.element == Float($0.offset + 1) / 1_048_576 }; #expect(holds) }
    }

    @Test func setRateAtHostTimeStartsWithinTwoMillisecondsOnTheNullRoute() throws {
        struct Start { var heardAt: UInt64; var wokeAt: UInt64 }
        let start = Mutex<Start?>(nil)
        let route = NullRoute(monitor: { _, periodStart, samples in
            guard let index = stride(from: 0, to: samples.count, by: 2).first(where: { samples[$0] != 0 }) else { return }
            let woke = HostClock.now()
            start.withLock { start in
                if start == nil { start = Start(heardAt: periodStart + UInt64(index / 2) * 1_000_000_000 / 44_100, wokeAt: woke) }
            }
        })
        let renderer = AudioRenderer(route: route)
        let synchronizer = RenderSynchronizer()
        try synchronizer.addRenderer(renderer)
        // The first frame of the buffer is frame 1 of the ramp: the first non-zero sample is the start.
        var buffer = H.ramp(fromFrame: 1, frames: 44_100)
        buffer.outputPresentationTime = .zero
        renderer.enqueue(buffer)
        Thread.sleep(forTimeInterval: 0.05)
        let hostTime = HostClock.now() + 300_000_000
        synchronizer.setRate(1, time: .zero, atHostTime: HostClock.time(nanoseconds: hostTime))
        Thread.sleep(forTimeInterval: 0.5)
        synchronizer.removeRenderer(renderer, at: .invalid)
        let measured = try #require(start.withLock { $0 })
        let error = abs(Double(Int64(measured.heardAt) - Int64(hostTime))) / 1e6
        #expect(error < 2, "audio started \(error) ms from the requested host time")
        // The route's thread really was awake then (not only by its own account).
        let lateness = Double(Int64(measured.wokeAt) - Int64(measured.heardAt)) / 1e6
        #expect(lateness < 10, "the null route rendered \(lateness) ms late")
    }

    @Test func aRouteChangeAnnouncesTheFlushTimeAndTheTimelineGoesOn() throws {
        let renderer = AudioRenderer(route: NullRoute())
        let synchronizer = RenderSynchronizer()
        try synchronizer.addRenderer(renderer)
        renderer.enqueue(H.ramp(fromFrame: 0, frames: 44_100 * 3))
        let flushed = Mutex<MediaTime?>(nil)
        let announced = DispatchSemaphore(value: 0)
        let token = renderer.observeFlushedAutomatically(on: DispatchQueue(label: "test")) { time in
            flushed.withLock { $0 = time }
            announced.signal()
        }
        synchronizer.setRate(1, time: .zero)
        Thread.sleep(forTimeInterval: 0.5)
        let before = synchronizer.currentTime()
        let second = NullRoute()
        try renderer.setRoute(second)
        #expect(announced.wait(timeout: .now() + 2) == .success)
        let time = try #require(flushed.withLock { $0 })
        #expect(abs(time.seconds - before.seconds) <= 0.06, "flushed at \(time.seconds), the timeline read \(before.seconds)")
        #expect(renderer.queuedByteCount == 0, "the queue was not flushed")
        #expect(renderer.route === second)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(abs(synchronizer.currentTime().seconds - time.seconds - 0.3) < 0.06, "the timeline did not go on on the new route")
        renderer.removeObserver(token)
        synchronizer.removeRenderer(renderer, at: .invalid)
    }

    @Test func removeRendererAtATimeCompletesThenAndReportsSupersededRemovals() throws {
        let renderer = AudioRenderer(route: NullRoute())
        let synchronizer = RenderSynchronizer()
        try synchronizer.addRenderer(renderer)
        synchronizer.setRate(1, time: .zero)
        let results = Mutex<[String: Bool]>([:])
        let done = DispatchSemaphore(value: 0)
        synchronizer.removeRenderer(renderer, at: MediaTime(value: 10, timescale: 1)) { removed in results.withLock { $0["first"] = removed }; done.signal() }
        synchronizer.removeRenderer(renderer, at: MediaTime(value: 2, timescale: 10)) { removed in results.withLock { $0["second"] = removed }; done.signal() }
        #expect(done.wait(timeout: .now() + 2) == .success && done.wait(timeout: .now() + 2) == .success)
        #expect(results.withLock { $0 } == ["first": false, "second": true])
        #expect(synchronizer.renderers.isEmpty)
        let stranger = AudioRenderer(route: NullRoute())
        synchronizer.removeRenderer(stranger, at: .invalid) { removed in results.withLock { $0["stranger"] = removed }; done.signal() }
        #expect(done.wait(timeout: .now() + 2) == .success)
        #expect(results.withLock { $0["stranger"] } == false)
    }

    @Test func aRateChangeWaitsForSufficientMediaDataUnlessToldNotTo() throws {
        let renderer = AudioRenderer(route: NullRoute())
        let synchronizer = RenderSynchronizer()
        try synchronizer.addRenderer(renderer)
        #expect(synchronizer.delaysRateChangeUntilHasSufficientMediaData)
        renderer.requestMediaDataWhenReady(on: DispatchQueue(label: "test.idle")) {}
        synchronizer.setRate(1, time: .zero)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(synchronizer.currentTime() == .zero, "the timeline started without audio")
        #expect(!renderer.hasSufficientMediaDataForReliablePlaybackStart)
        renderer.enqueue(H.ramp(fromFrame: 0, frames: 44_100))
        Thread.sleep(forTimeInterval: 0.3)
        #expect(synchronizer.currentTime().seconds > 0.2, "the delayed rate change did not apply once audio arrived")
        renderer.stopRequestingMediaData()
        synchronizer.removeRenderer(renderer, at: .invalid)

        let eager = RenderSynchronizer()
        let starved = AudioRenderer(route: NullRoute())
        try eager.addRenderer(starved)
        starved.requestMediaDataWhenReady(on: DispatchQueue(label: "test.idle2")) {}
        eager.delaysRateChangeUntilHasSufficientMediaData = false
        eager.setRate(1, time: .zero)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(eager.currentTime().seconds > 0.2, "with the delay off the timeline must start at once")
        starved.stopRequestingMediaData()
        eager.removeRenderer(starved, at: .invalid)
    }

    @Test func rateChangesAreAnnounced() async throws {
        let synchronizer = RenderSynchronizer()
        let announced = Mutex<[MediaTime]>([])
        let token = synchronizer.observeRateChanges(on: DispatchQueue(label: "test.rates")) { time in announced.withLock { $0.append(time) } }
        var changes = synchronizer.rateChanges().makeAsyncIterator()
        synchronizer.setRate(1, time: MediaTime(value: 5, timescale: 1))
        let first = await changes.next()
        #expect(first == RenderSynchronizer.RateChange(rate: 1, time: MediaTime(value: 5, timescale: 1)))
        synchronizer.setRate(1, time: .invalid) // the same rate: no event
        synchronizer.setRate(0, time: .invalid)
        let second = await changes.next()
        #expect(second?.rate == 0)
        #expect(synchronizer.rate == 0, "rate is not read-after-write consistent")
        try await Task.sleep(for: .milliseconds(100))
        #expect(announced.withLock { $0.count } == 2)
        synchronizer.removeTimeObserver(token)
    }
}
