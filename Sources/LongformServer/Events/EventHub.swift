import Dispatch
import Foundation
import Synchronization

/// Hands every event to every connected event-stream client. Each event is encoded once; each
/// client has a queue of its own, bounded by count and by bytes, and a client that falls that far
/// behind is disconnected (its browser reconnects and starts again from a fresh `state` event)
/// rather than making the others wait or the server hold unbounded memory: a client that stops
/// reading costs at most `clientQueueByteLimit` (and what the socket holds), whatever the
/// playlist's length.
final class EventHub: Sendable {
    /// How many events a client may have waiting.
    static let clientQueueLimit = 1024
    /// How many bytes of events a client may have waiting (a `playlist` event of the longest
    /// playlist, `PlayerController.maximumPlaylistLength` items, is about 2.5 MB).
    static let clientQueueByteLimit = 8 << 20

    /// One client's stream of event texts. The reader calls `didTake` with each text it takes,
    /// so that the hub counts only what still waits.
    struct Subscription: Sendable {
        /// The event texts, in order; ends when the hub drops the client or shuts down.
        let events: AsyncStream<String>
        /// Tells the hub that `text` left the queue.
        let didTake: @Sendable (_ text: String) -> Void
    }

    /// A client's queue; events published while its first event is being made are held.
    private struct Subscriber {
        var continuation: AsyncStream<String>.Continuation
        var held: [String]?
        /// Bytes yielded and not yet taken by the reader.
        var queuedBytes = 0
    }

    private let subscribers = Mutex<[UUID: Subscriber]>([:])
    /// Set by `finishAll`: a client arriving during the shutdown gets a stream that ends at once.
    private let isFinished = Atomic<Bool>(false)
    /// Sends happen here, in order, not on the publisher's thread: the player's queue goes on at
    /// once, and the reply to the command that caused the event is not queued behind a hundred
    /// clients' writes.
    private let sendQueue = DispatchQueue(label: "longform.server.events")

    /// Called, outside the hub's lock, after a client came or went.
    private let subscribersDidChange = Mutex<(@Sendable () -> Void)?>(nil)

    /// The number of connected clients.
    var subscriberCount: Int { subscribers.withLock { $0.count } }

    /// Calls `handler` after every arrival or departure of a client (it reads `subscriberCount`).
    func onSubscribersChange(_ handler: @escaping @Sendable () -> Void) {
        subscribersDidChange.withLock { $0 = handler }
    }

    private func notifySubscribersChanged() {
        subscribersDidChange.withLock { $0 }?()
    }

    /// A new client's stream: the event `first` makes (the current state), then every event
    /// published from the moment of the call. Events published while `first` runs follow it: the
    /// state may already show them, and every event is one a client can apply twice.
    func subscribe(first: () -> ServerEvent) -> Subscription {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(Self.clientQueueLimit))
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
            self?.notifySubscribersChanged()
        }
        let isOpen = subscribers.withLock { subscribers in
            guard !isFinished.load(ordering: .acquiring) else { return false }
            subscribers[id] = Subscriber(continuation: continuation, held: [])
            return true
        }
        let subscription = Subscription(events: stream) { [weak self] text in
            self?.subscribers.withLock { $0[id]?.queuedBytes -= text.utf8.count }
        }
        guard isOpen else {
            continuation.finish()
            return subscription
        }
        // Made outside the lock: making the state waits for the player, which may be publishing.
        let firstText = first().wireText
        subscribers.withLock { subscribers in
            guard let held = subscribers[id]?.held else { return }
            for text in [firstText] + held {
                // Counted only if queued (more than the count limit held: the rest is dropped).
                if case .enqueued = continuation.yield(text) { subscribers[id]?.queuedBytes += text.utf8.count }
            }
            subscribers[id]?.held = nil
        }
        notifySubscribersChanged()
        return subscription
    }

    /// Sends `event` to every client.
    func publish(_ event: ServerEvent) {
        let text = event.wireText
        sendQueue.async { self.send(text) }
    }

    /// A comment line: keeps proxies from closing an idle stream, and finds clients that left.
    func sendKeepAlive() {
        sendQueue.async { self.send(": keep-alive\n\n") }
    }

    private func send(_ text: String) {
        let laggards = subscribers.withLock { subscribers in
            var laggards: [AsyncStream<String>.Continuation] = []
            let size = text.utf8.count
            for (id, subscriber) in subscribers {
                if subscriber.held != nil {
                    subscribers[id]?.held?.append(text)
                } else if subscriber.queuedBytes > 0 && subscriber.queuedBytes + size > Self.clientQueueByteLimit {
                    // (An event larger than the limit still goes to a client with nothing waiting.)
                    subscribers.removeValue(forKey: id)
                    laggards.append(subscriber.continuation)
                } else if case .dropped = subscriber.continuation.yield(text) {
                    subscribers.removeValue(forKey: id)
                    laggards.append(subscriber.continuation)
                } else {
                    subscribers[id]?.queuedBytes += size
                }
            }
            return laggards
        }
        // Outside the lock: finishing runs `onTermination`, which takes it.
        for continuation in laggards { continuation.finish() }
    }

    /// Ends every client's stream (on shutdown).
    func finishAll() {
        let all = subscribers.withLock { subscribers in
            isFinished.store(true, ordering: .releasing)
            defer { subscribers.removeAll() }
            return subscribers.values.map(\.continuation)
        }
        for continuation in all { continuation.finish() }
        notifySubscribersChanged()
    }
}
