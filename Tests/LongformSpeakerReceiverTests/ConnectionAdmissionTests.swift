@testable import LongformSpeakerReceiver
import Testing

/// The speaker's rule for connections that are not yet the sender, as events in and actions out:
/// each has `handshakeLimit` to become the sender, and one over the cap closes the oldest waiting.
@Suite struct ConnectionAdmissionTests {
    static let second: UInt64 = 1_000_000_000

    @Test func aConnectionThatDoesNotBecomeTheSenderInTimeIsClosedWhateverItSends() {
        var admission = ConnectionAdmission<Int>(handshakeLimit: 5 * Self.second, maximumPending: 8)
        #expect(admission.opened(1, at: 0).isEmpty)
        #expect(admission.opened(2, at: 2 * Self.second).isEmpty)
        #expect(admission.nextDeadline == 5 * Self.second)
        #expect(admission.expire(at: 5 * Self.second - 1).isEmpty)
        #expect(admission.expire(at: 5 * Self.second) == [.close(1, .handshakeTimedOut)])
        #expect(admission.pendingIDs == [2])
        // Too late to become the sender, even before its close is done.
        #expect(admission.admit(2, at: 7 * Self.second) == false)
        #expect(admission.expire(at: 7 * Self.second) == [.close(2, .handshakeTimedOut)])
        #expect(admission.nextDeadline == nil)
    }

    @Test func oneOverTheCapClosesTheOldestWaitingNotTheNewcomer() {
        var admission = ConnectionAdmission<Int>(handshakeLimit: 5 * Self.second, maximumPending: 3)
        for id in 1...3 { #expect(admission.opened(id, at: UInt64(id)).isEmpty) }
        #expect(admission.opened(4, at: 10) == [.close(1, .crowdedOut)])
        #expect(admission.opened(5, at: 11) == [.close(2, .crowdedOut)])
        #expect(admission.pendingIDs == [3, 4, 5])
        // The newest still gets in.
        #expect(admission.admit(5, at: 12) == true)
        #expect(admission.pendingIDs == [3, 4])
        // A crowded-out connection cannot become the sender.
        #expect(admission.admit(1, at: 13) == false)
    }

    @Test func theSenderNeverCountsAgainstTheCapAndAClosedOneLeaves() {
        var admission = ConnectionAdmission<Int>(handshakeLimit: 5 * Self.second, maximumPending: 2)
        _ = admission.opened(1, at: 0)
        #expect(admission.admit(1, at: 1) == true)
        _ = admission.opened(2, at: 2)
        _ = admission.opened(3, at: 3)
        // Two waiting and the sender: the next closes the oldest waiting, never the sender.
        #expect(admission.opened(4, at: 4) == [.close(2, .crowdedOut)])
        admission.closed(3)
        #expect(admission.pendingIDs == [4])
        #expect(admission.opened(5, at: 5).isEmpty)
        // The sender's time limit does not apply to it once admitted.
        #expect(admission.expire(at: 100 * Self.second) == [.close(4, .handshakeTimedOut), .close(5, .handshakeTimedOut)])
        admission.closed(1)
        #expect(admission.pendingIDs.isEmpty)
    }

    /// A stranger who keeps 1,000 connections a second coming, each held: a sender whose hello
    /// comes before `maximumPending` newer ones gets in; none of the stranger's outlives its limit.
    @Test func aSenderWhoseHelloComesAtOnceGetsInThroughAFlood() {
        let millisecond: UInt64 = 1_000_000
        var admission = ConnectionAdmission<Int>()
        var closedByDeadline = 0
        var time: UInt64 = 0
        for id in 0..<10_000 {
            time = UInt64(id) * millisecond
            closedByDeadline += admission.opened(id, at: time).filter { $0 == .close($0.id, .handshakeTimedOut) }.count
            if id == 5_000 { _ = admission.opened(-1, at: time) }
            if id == 5_000 + ConnectionAdmission<Int>.standardMaximumPending - 2 { #expect(admission.admit(-1, at: time) == true) }
            #expect(admission.pendingIDs.count <= ConnectionAdmission<Int>.standardMaximumPending)
        }
        #expect(closedByDeadline == 0, "crowded out long before their limit")
        #expect(admission.opened(10_000, at: time + 1).count == 1)
    }
}

extension ConnectionAdmission.Action {
    /// The connection this action is about.
    var id: ID { switch self { case .close(let id, _): id } }
}
