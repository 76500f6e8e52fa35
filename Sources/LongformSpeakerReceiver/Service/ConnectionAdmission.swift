/// Which connections a speaker keeps while they shake hands. A connection is pending from its
/// opening until it becomes the sender (its hello heard, and its proof when the speaker has a
/// secret); a pending connection is closed `handshakeLimit` after it opened, and at most
/// `maximumPending` are pending at once: one more closes the oldest pending one, not the newcomer,
/// so that a sender whose hello comes at once gets in however fast strangers open connections.
/// The sender never counts. Events in, actions out: no clock, socket or thread of its own.
struct ConnectionAdmission<ID: Hashable & Sendable>: Sendable {
    /// How long a connection may take to become the sender: a hello, and a pairing's round trip.
    static var standardHandshakeLimit: UInt64 { 5_000_000_000 }
    /// Pending connections kept at once: a sender has until this many newer ones arrive to finish
    /// its handshake (32 ms at 1,000 a second).
    static var standardMaximumPending: Int { 32 }

    /// Why a pending connection is to be closed.
    enum Reason: Sendable, Equatable {
        /// `maximumPending` newer connections arrived before it became the sender.
        case crowdedOut
        /// It did not become the sender within `handshakeLimit`.
        case handshakeTimedOut
    }

    /// What the owner is to do.
    enum Action: Sendable, Equatable {
        /// Close the connection `ID` (it is no longer pending).
        case close(ID, Reason)
    }

    /// Nanoseconds a connection may stay pending.
    let handshakeLimit: UInt64
    /// At most this many connections pending at once (at least 1).
    let maximumPending: Int
    /// The pending connections, oldest first, each with the time it must have become the sender by.
    private var pending: [(id: ID, deadline: UInt64)] = []

    /// An admission with nothing pending.
    init(handshakeLimit: UInt64 = Self.standardHandshakeLimit, maximumPending: Int = Self.standardMaximumPending) {
        self.handshakeLimit = handshakeLimit
        self.maximumPending = max(maximumPending, 1)
    }

    /// The pending connections, oldest first.
    var pendingIDs: [ID] { pending.map(\.id) }

    /// When the oldest pending connection's time is up (nanoseconds, the clock `now` is given in), if any.
    var nextDeadline: UInt64? { pending.first?.deadline }

    /// `id` opened at `now`: it is pending; the oldest pending ones over the cap are to be closed.
    mutating func opened(_ id: ID, at now: UInt64) -> [Action] {
        var actions = expire(at: now)
        pending.removeAll { $0.id == id }
        while pending.count >= maximumPending {
            actions.append(.close(pending.removeFirst().id, .crowdedOut))
        }
        pending.append((id, now &+ handshakeLimit))
        return actions
    }

    /// `id` asks to become the sender at `now`: true (and it no longer counts) if it is still
    /// pending and in time; false if it was closed or is being closed.
    mutating func admit(_ id: ID, at now: UInt64) -> Bool {
        guard let index = pending.firstIndex(where: { $0.id == id }), now < pending[index].deadline else { return false }
        pending.remove(at: index)
        return true
    }

    /// `id` closed (pending or not): it no longer counts.
    mutating func closed(_ id: ID) {
        pending.removeAll { $0.id == id }
    }

    /// The pending connections whose time is up at `now` are to be closed.
    mutating func expire(at now: UInt64) -> [Action] {
        var actions: [Action] = []
        // Deadlines rise with the order of opening: the expired ones lead.
        while let first = pending.first, now >= first.deadline {
            actions.append(.close(pending.removeFirst().id, .handshakeTimedOut))
        }
        return actions
    }
}
