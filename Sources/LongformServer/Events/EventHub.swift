import Foundation
import Synchronization

/// Hands every event to every connected event-stream client. Each event is encoded once; each
/// client has a bounded queue of its own, and a client that falls that far behind is
/// disconnected (its browser reconnects and starts again from a fresh `state` event) rather than
/// making the others wait or the server hold unbounded memory.
final class EventHub: Sendable {
    /// How many events a client may have waiting.
    static let clientQueueLimit = 1024

    private let subscribers = Mutex<[UUID: AsyncStream<String>.Continuation]>([:])

    /// The number of connected clients.
    var subscriberCount: Int { subscribers.withLock { $0.count } }

    /// A new client's stream: `first` (the current state), then every event published from now on.
    func subscribe(first: ServerEvent) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(Self.clientQueueLimit))
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        // Registered and given the state under one lock, so that no event falls between the two.
        subscribers.withLock { subscribers in
            subscribers[id] = continuation
            continuation.yield(first.wireText)
        }
        return stream
    }

    /// Sends `event` to every client.
    func publish(_ event: ServerEvent) {
        send(event.wireText)
    }

    /// A comment line: keeps proxies from closing an idle stream, and finds clients that left.
    func sendKeepAlive() {
        send(": keep-alive\n\n")
    }

    private func send(_ text: String) {
        let laggards = subscribers.withLock { subscribers in
            var laggards: [AsyncStream<String>.Continuation] = []
            for (id, continuation) in subscribers {
                if case .dropped = continuation.yield(text) {
                    subscribers.removeValue(forKey: id)
                    laggards.append(continuation)
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
            defer { subscribers.removeAll() }
            return Array(subscribers.values)
        }
        for continuation in all { continuation.finish() }
    }
}
