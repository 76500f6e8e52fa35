import Dispatch
import Foundation
import Synchronization

/// Hands every event to every connected event-stream client. Each event is encoded once; each
/// client has a bounded queue of its own, and a client that falls that far behind is
/// disconnected (its browser reconnects and starts again from a fresh `state` event) rather than
/// making the others wait or the server hold unbounded memory.
final class EventHub: Sendable {
    /// How many events a client may have waiting.
    static let clientQueueLimit = 1024

    /// A client's queue; events published while its first event is being made are held.
    private struct Subscriber {
        var continuation: AsyncStream<String>.Continuation
        var held: [String]?
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
    func subscribe(first: () -> ServerEvent) -> AsyncStream<String> {
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
        guard isOpen else {
            continuation.finish()
            return stream
        }
        // Made outside the lock: making the state waits for the player, which may be publishing.
        let firstText = first().wireText
        subscribers.withLock { subscribers in
            guard let held = subscribers[id]?.held else { return }
            continuation.yield(firstText)
            for text in held { continuation.yield(text) }
            subscribers[id]?.held = nil
        }
        notifySubscribersChanged()
        return stream
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
            for (id, subscriber) in subscribers {
                if subscriber.held != nil {
                    subscribers[id]?.held?.append(text)
                } else if case .dropped = subscriber.continuation.yield(text) {
                    subscribers.removeValue(forKey: id)
                    laggards.append(subscriber.continuation)
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
