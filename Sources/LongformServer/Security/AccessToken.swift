import Foundation

/// The secret a client must show when the server listens beyond loopback.
struct AccessToken: Sendable, Equatable {
    /// The token's text.
    let value: String

    /// The name of the cookie the web player keeps it in.
    static let cookieName = "longform_token"

    init(_ value: String) { self.value = value }

    /// 128 random bits, as 32 hexadecimal digits.
    static func generate() -> AccessToken {
        var generator = SystemRandomNumberGenerator()
        return AccessToken((0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined())
    }

    /// Whether `candidate` is the token, compared in time that does not depend on where they differ.
    func matches(_ candidate: Substring) -> Bool {
        let expected = Array(value.utf8)
        let given = Array(candidate.utf8)
        var difference = UInt8(expected.count == given.count ? 0 : 1)
        for index in expected.indices { difference |= expected[index] ^ (index < given.count ? given[index] : 0) }
        return difference == 0
    }
}
