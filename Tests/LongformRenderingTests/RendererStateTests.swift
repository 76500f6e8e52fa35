import LongformCore
@testable import LongformRendering
import LongformRoutes
import Testing

/// The renderer's playhead and readiness rules, read from its state alone: no route is started.
@Suite struct RendererStateTests {
    /// `seconds` of stereo silence at 44.1 kHz from media frame `start`.
    static func chunk(from start: Int64, seconds: Double) -> [RenderChunk] {
        let frames = Int(seconds * 44_100)
        return [RenderChunk(startFrame: start, samples: [Float](repeating: 0, count: frames * 2), sourceTime: MediaTime(value: start, timescale: 44_100), frameCount: frames)]
    }

    /// A rule's value, read outside `#expect` so that a failure does not print the whole queue.
    static func read<Value>(_ state: RendererState, _ rule: KeyPath<RendererState, Value>) -> Value { state[keyPath: rule] }

    static func state(rewinding: Bool = false, lookAhead: Double = 1) -> RendererState {
        var state = RendererState(route: NullRoute(rewindMarginSeconds: rewinding ? 0.0005 : nil))
        state.lookAhead = lookAhead
        return state
    }

    @Test func itWantsMoreUntilTheLookAheadIsEnqueued() {
        var state = Self.state()
        #expect(Self.read(state, \.isReadyForMoreMediaData) && Self.read(state, \.framesAhead) == 0)
        state.queue.append(Self.chunk(from: 0, seconds: 0.5))
        #expect(Self.read(state, \.isReadyForMoreMediaData) && Self.read(state, \.framesAhead) == 22_050)
        state.queue.append(Self.chunk(from: 22_050, seconds: 0.5))
        #expect(!Self.read(state, \.isReadyForMoreMediaData))
        state.status = .failed
        state.queue.removeAll()
        #expect(!Self.read(state, \.isReadyForMoreMediaData))
    }

    @Test func aStartWaitsForThePrerollUnlessNothingMoreIsComing() {
        var state = Self.state()
        state.queue.append(Self.chunk(from: 0, seconds: 0.3))
        #expect(Self.read(state, \.hasSufficientMediaDataForReliablePlaybackStart)) // no request: this is all there is
        state.request = RendererState.Request(queue: .main, block: {}, generation: 1)
        #expect(!Self.read(state, \.hasSufficientMediaDataForReliablePlaybackStart))
        state.queue.append(Self.chunk(from: 13_230, seconds: 0.2))
        #expect(Self.read(state, \.hasSufficientMediaDataForReliablePlaybackStart))
        // A look-ahead shorter than the preroll: 90 % of it is enough.
        var short = Self.state(lookAhead: 0.2)
        short.request = state.request
        short.queue.append(Self.chunk(from: 0, seconds: 0.19))
        #expect(Self.read(short, \.hasSufficientMediaDataForReliablePlaybackStart))
    }

    @Test func onARewindableRouteAShorterPrerollIsEnough() {
        var state = Self.state(rewinding: true)
        state.request = RendererState.Request(queue: .main, block: {}, generation: 1)
        state.queue.append(Self.chunk(from: 0, seconds: 0.2))
        #expect(Self.read(state, \.hasSufficientMediaDataForReliablePlaybackStart))
        var plain = Self.state()
        plain.request = state.request
        plain.queue.append(Self.chunk(from: 0, seconds: 0.2))
        #expect(!Self.read(plain, \.hasSufficientMediaDataForReliablePlaybackStart))
    }

    @Test func thePlayheadIsWhatWasLastRenderedUntilTheTimelineMoves() {
        var state = Self.state()
        #expect(Self.read(state, \.playheadFrame) == nil) // no synchronizer yet
        let synchronizer = RenderSynchronizer()
        state.synchronizer = synchronizer
        #expect(Self.read(state, \.playheadFrame) == 0)
        state.queue.append(Self.chunk(from: 0, seconds: 1))
        state.renderedMediaFrame = 4_410
        state.renderedGeneration = synchronizer.timebase.generation
        #expect(Self.read(state, \.playheadFrame) == 4_410)
        // Audio before the playhead is not ahead of it.
        #expect(Self.read(state, \.framesAhead) == 44_100 - 4_410)
        // Rendered under another timeline generation, it says nothing of the playhead.
        state.renderedGeneration &+= 1
        #expect(Self.read(state, \.playheadFrame) == 0)
    }

    @Test func theRequestIsCalledOnceAtATimeAndOnlyWhileReady() {
        var state = Self.state()
        #expect(state.scheduleRequestIfReady() == nil, "no request yet")
        state.setRequest(on: .main) {}
        let first = state.scheduleRequestIfReady()
        #expect(first?.generation == 1 && state.scheduleRequestIfReady() == nil, "one call scheduled at a time")
        // The call runs: ready, so it gets the block, and the enqueue count it started at.
        let call = state.beginRequestCall(generation: 1)
        #expect(call?.block != nil && call?.enqueueCountBefore == 0)
        #expect(state.enqueuedNothing(since: 0))
        state.enqueueCount += 1
        #expect(!state.enqueuedNothing(since: 0))
        // Filled to the look-ahead: nothing is scheduled, and a call already scheduled gets no block.
        #expect(state.scheduleRequestIfReady() != nil)
        state.queue.append(Self.chunk(from: 0, seconds: 1))
        #expect(state.beginRequestCall(generation: 1).map { $0.block == nil } == true)
        #expect(state.scheduleRequestIfReady() == nil)
    }

    @Test func aReplacedRequestsScheduledCallDoesNothing() {
        var state = Self.state()
        state.setRequest(on: .main) {}
        _ = state.scheduleRequestIfReady()
        state.setRequest(on: .main) {}
        #expect(state.beginRequestCall(generation: 1) == nil, "the first request's call")
        #expect(state.scheduleRequestIfReady()?.generation == 2, "the new request is called, once")
        state.request = nil // stopRequestingMediaData
        #expect(state.beginRequestCall(generation: 2) == nil && state.scheduleRequestIfReady() == nil)
    }
}
