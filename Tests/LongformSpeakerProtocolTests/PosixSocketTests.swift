import Foundation
import LongformCore
@testable import LongformSpeakerProtocol
import Testing

/// The UDP calls the clock exchange relies on, on real loopback sockets.
@Suite struct PosixSocketTests {
    /// A datagram read long after it arrived reports when it arrived: a clock reply read late
    /// by a busy thread must not look like a slow network. (The system turns stamping on for its
    /// first user a moment after the call, from a work queue: the first datagrams of a loaded
    /// machine may come unstamped, so a few tries are allowed.)
    @Test func aStampedDatagramReportsWhenItArrivedNotWhenItWasRead() throws {
        let receiver = try PosixSocket.boundDatagramSocket()
        receiver.stampArrivals()
        receiver.setTimeouts(seconds: 1)
        let sender = try PosixSocket.connectedDatagramSocket(host: "127.0.0.1", port: receiver.localPort)
        var delays: [Double] = []
        for attempt in 0..<5 {
            let sent = HostClock.now()
            sender.sendDatagram([1, 2, UInt8(attempt)])
            Thread.sleep(forTimeInterval: 0.2)
            let datagram = try #require(receiver.receiveDatagram())
            #expect(datagram.bytes == [1, 2, UInt8(attempt)])
            #expect(datagram.receivedAt >= sent)
            delays.append(Double(Int64(datagram.receivedAt) - Int64(sent)) / 1e6)
            if datagram.receivedAt <= sent + 50_000_000 { return }
        }
        Issue.record("each datagram, read 200 ms after its send, was stamped that late: \(delays) ms")
    }

    /// Without stamps, the time is when it was read; a connected socket hears its peer only, and
    /// an answer sent back to the sender's address reaches it.
    @Test func aConnectedSocketHearsItsPeerOnly() throws {
        let peer = try PosixSocket.boundDatagramSocket()
        peer.setTimeouts(seconds: 1)
        let stranger = try PosixSocket.boundDatagramSocket()
        let client = try PosixSocket.connectedDatagramSocket(host: "127.0.0.1", port: peer.localPort)
        client.setTimeouts(seconds: 0.3)
        client.sendDatagram([7])
        let request = try #require(peer.receiveDatagram())
        #expect(request.bytes == [7])
        // A stranger writing to the client's port is not heard; the peer's answer is.
        stranger.sendDatagram([9], to: request.sender, length: request.senderLength)
        peer.sendDatagram([8], to: request.sender, length: request.senderLength)
        let before = HostClock.now()
        let answer = try #require(client.receiveDatagram())
        #expect(answer.bytes == [8])
        #expect(answer.receivedAt >= before)
        #expect(client.receiveDatagram() == nil, "nothing else arrives")
    }

    /// The clock thread's sleep between requests: a reply that comes does not end it (the reply
    /// is read after it, stamped with when it came: above), a shutdown from another thread does.
    @Test func aSleepUntilShutDownIsEndedByAShutdownNotByADatagram() throws {
        let peer = try PosixSocket.boundDatagramSocket()
        let client = try PosixSocket.connectedDatagramSocket(host: "127.0.0.1", port: peer.localPort)
        client.setTimeouts(seconds: 1)
        client.sendDatagram([7])
        peer.setTimeouts(seconds: 1)
        let request = try #require(peer.receiveDatagram())
        let sent = HostClock.now()
        peer.sendDatagram([8], to: request.sender, length: request.senderLength)
        #expect(!client.waitUntilShutDown(milliseconds: 300), "a datagram ended the sleep")
        #expect(HostClock.now() - sent >= 290_000_000)
        let answer = try #require(client.receiveDatagram())
        #expect(answer.bytes == [8])

        let shutter = Thread { Thread.sleep(forTimeInterval: 0.1); client.shutdown() }
        let before = HostClock.now()
        shutter.start()
        #expect(client.waitUntilShutDown(milliseconds: 5_000))
        #expect(HostClock.now() - before < 1_000_000_000, "the shutdown ended the sleep")
    }

    /// A name where a numeric address is expected is refused with the name in the error.
    @Test func aNonNumericAddressIsNamedInTheError() {
        #expect {
            _ = try PosixSocket.connectedDatagramSocket(host: "speaker.invalid", port: 7000)
        } throws: { error in
            "\(error)".contains("speaker.invalid")
        }
    }
}
