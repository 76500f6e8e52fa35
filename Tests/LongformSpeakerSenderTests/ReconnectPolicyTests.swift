@testable import LongformSpeakerSender
import Testing

/// When a speaker link tries again and when it says so, without a socket.
@Suite struct ReconnectPolicyTests {
    @Test func theDelayDoublesToASecondWhileConnectionsFail() {
        var policy = ReconnectPolicy()
        let delays = (0..<6).map { _ in policy.connectionEnded(wasWelcomed: false, lastedSeconds: 0.01) }
        #expect(delays == [0.1, 0.2, 0.4, 0.8, 1, 1])
    }

    @Test func onlyAWelcomedConnectionThatLastedStartsTheDelayOver() {
        var policy = ReconnectPolicy()
        _ = (0..<4).map { _ in policy.connectionEnded(wasWelcomed: false, lastedSeconds: 0.01) }
        // A speaker that welcomes and closes at once (it refuses the stream): still backing off.
        #expect(policy.connectionEnded(wasWelcomed: true, lastedSeconds: 0.2) == 1)
        // A long connection that was never welcomed (a silent peer) does not count either.
        #expect(policy.connectionEnded(wasWelcomed: false, lastedSeconds: 60) == 1)
        #expect(policy.connectionEnded(wasWelcomed: true, lastedSeconds: 6) == 0.1)
        #expect(policy.connectionEnded(wasWelcomed: false, lastedSeconds: 0.01) == 0.2)
    }

    @Test func aFailureIsLoggedTheFirstTimeAndEverySixtiethAfter() {
        var policy = ReconnectPolicy()
        let logged = (1...130).filter { _ in policy.attemptFailed() }
        #expect(logged.count == 3 && policy.failures == 130)
        _ = policy.connectionEnded(wasWelcomed: true, lastedSeconds: 10)
        let isLogged = policy.attemptFailed()
        #expect(isLogged, "after a settled connection, the next failure is news again")
    }
}
