import FuzzSupport
import LongformSpeakerProtocol

/// The clock exchange's datagrams against any bytes (a forged or damaged datagram). Invariant:
/// a datagram is taken as a request or a reply only if its fields are exactly those that encoding
/// that request or reply writes (the trailing tag aside); and a datagram is taken as tagged by a
/// secret only if it is byte for byte what encoding its fields with that secret's key writes.
enum ClockExchangeFuzzer {
    /// The bytes of a request and of a reply before their tag.
    static let requestFields = 16, replyFields = 32
    static let key = ClockKey(secret: try! PairingSecret(passphrase: "the fuzz target's secret"))

    static func run(_ bytes: [UInt8]) {
        if let request = ClockExchange.decodeRequest(bytes) {
            let encoded = ClockExchange.encode(request)
            FuzzInput.require(encoded.count == bytes.count && encoded.prefix(requestFields) == bytes.prefix(requestFields), "request \(request) from \(bytes)")
        }
        if let reply = ClockExchange.decodeReply(bytes) {
            let encoded = ClockExchange.encode(reply)
            FuzzInput.require(encoded.count == bytes.count && encoded.prefix(replyFields) == bytes.prefix(replyFields), "reply \(reply) from \(bytes)")
        }
        if let (request, key) = ClockExchange.decodeRequest(bytes, keys: [key]), let key {
            FuzzInput.require(ClockExchange.encode(request, key: key) == bytes, "tagged request \(request) from \(bytes)")
        }
        if let reply = ClockExchange.decodeReply(bytes, key: key) {
            FuzzInput.require(ClockExchange.encode(reply, key: key) == bytes, "tagged reply \(reply) from \(bytes)")
        }
    }
}

/// Runs under libFuzzer or replays saved inputs (see `FuzzInput`).
@main struct ClockExchangeFuzzerMain {
    static func main() { FuzzInput.main(ClockExchangeFuzzer.run) }
}
