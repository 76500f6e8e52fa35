@testable import LongformSpeakerProtocol
import Testing

/// The clock exchange's datagrams and, in a paired group, their tags: a speaker takes only replies
/// its sender's secret tagged, and a sender answers only requests tagged by a secret it knows.
@Suite struct ClockExchangeTests {
    static let key = ClockKey(secret: try! PairingSecret(passphrase: "a long random secret for the tests"))
    static let otherKey = ClockKey(secret: try! PairingSecret(passphrase: "another long random secret"))
    static let request = ClockExchange.Request(sequence: 7, t1: 1_000_000)
    static let reply = ClockExchange.Reply(sequence: 7, t1: 1_000_000, t2: 2_000_000, t3: 2_000_500)

    @Test func withoutASecretTheTailIsZeroAndTheFieldsRoundTrip() {
        let bytes = ClockExchange.encode(Self.request)
        #expect(bytes.count == 24 && bytes.suffix(8).allSatisfy { $0 == 0 })
        #expect(ClockExchange.decodeRequest(bytes, keys: [Self.key]).map { $0.request == Self.request && $0.key == nil } == true,
                "an untagged request (a speaker without a secret) is answered, untagged")
        #expect(ClockExchange.decodeReply(ClockExchange.encode(Self.reply), key: nil) == Self.reply)
    }

    @Test func aTaggedRequestIsTakenOnlyWithTheKeyThatTaggedIt() {
        let bytes = ClockExchange.encode(Self.request, key: Self.key)
        #expect(bytes.count == 24 && !bytes.suffix(8).allSatisfy { $0 == 0 })
        #expect(ClockExchange.decodeRequest(bytes, keys: [Self.otherKey, Self.key]).map { $0.request == Self.request && $0.key == Self.key } == true)
        #expect(ClockExchange.decodeRequest(bytes, keys: [Self.otherKey]) == nil, "another secret's")
        #expect(ClockExchange.decodeRequest(bytes, keys: []) == nil, "a sender without a secret")
        var changed = bytes
        changed[15] ^= 1 // t1 moved by a nanosecond
        #expect(ClockExchange.decodeRequest(changed, keys: [Self.key]) == nil)
    }

    @Test func aPairedSpeakerTakesOnlyRepliesTaggedWithItsKey() {
        let tagged = ClockExchange.encode(Self.reply, key: Self.key)
        #expect(ClockExchange.decodeReply(tagged, key: Self.key) == Self.reply)
        #expect(ClockExchange.decodeReply(tagged, key: Self.otherKey) == nil)
        #expect(ClockExchange.decodeReply(ClockExchange.encode(Self.reply), key: Self.key) == nil, "an untagged reply (forged, or a sender without the secret)")
        var moved = tagged
        moved[31] ^= 0x80 // t3 moved: a forger shifting the speaker's clock
        #expect(ClockExchange.decodeReply(moved, key: Self.key) == nil)
        #expect(ClockExchange.decodeReply(tagged, key: nil) == Self.reply, "a speaker without a secret does not check tags")
    }
}
