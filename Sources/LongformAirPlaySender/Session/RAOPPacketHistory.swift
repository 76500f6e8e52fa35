import Synchronization

/// The audio packets last sent, by sequence number, for the receivers' resend requests: the
/// newest 1,024 (about 8 s, what a receiver's buffer holds), shared by every receiver of a route,
/// which all get the same packets.
final class RAOPPacketHistory: Sendable {
    /// How many packets it keeps.
    static let capacity = 1024

    private struct Entry {
        var sequenceNumber: UInt16
        var bytes: [UInt8]
    }
    private let entries = Mutex<[Entry?]>(Array(repeating: nil, count: capacity))

    /// Keeps `packet`, sent as `sequenceNumber`, in place of the one 1,024 before it.
    func keep(_ packet: [UInt8], sequenceNumber: UInt16) {
        entries.withLock { $0[Int(sequenceNumber) % Self.capacity] = Entry(sequenceNumber: sequenceNumber, bytes: packet) }
    }

    /// The packet sent as `sequenceNumber`, if it is still kept.
    func packet(_ sequenceNumber: UInt16) -> [UInt8]? {
        entries.withLock { entries in
            guard let entry = entries[Int(sequenceNumber) % Self.capacity], entry.sequenceNumber == sequenceNumber else { return nil }
            return entry.bytes
        }
    }

    /// Forgets every packet (a new stream starts).
    func removeAll() {
        entries.withLock { $0 = Array(repeating: nil, count: Self.capacity) }
    }
}
