import Crypto

/// A receiver's request for a password: the `WWW-Authenticate: Digest realm="…", nonce="…"` of a
/// 401 answer, and the `Authorization` header that answers it (RFC 2617 without qop, as AirPlay
/// receivers check it).
public struct RTSPDigestChallenge: Sendable, Equatable {
    /// The realm the receiver named.
    public var realm: String
    /// The nonce it gave.
    public var nonce: String

    /// The user name AirPlay senders give: receivers check only the password.
    public static let userName = "iTunes"

    /// A challenge.
    public init(realm: String, nonce: String) {
        self.realm = realm
        self.nonce = nonce
    }

    /// Reads a `WWW-Authenticate` header; nil unless it is a Digest challenge with a realm and a nonce.
    public init?(parsing header: String) {
        let trimmed = header.trimmingSpaces()
        guard trimmed.lowercased().hasPrefix("digest ") else { return nil }
        var values: [String: String] = [:]
        for part in trimmed.dropFirst("digest ".count).split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            var value = pair[1].trimmingSpaces()
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            values[pair[0].trimmingSpaces().lowercased()] = value
        }
        guard let realm = values["realm"], let nonce = values["nonce"] else { return nil }
        self.init(realm: realm, nonce: nonce)
    }

    /// The `Authorization` header for `method` on `uri` with `password`.
    public func authorization(method: String, uri: String, password: String) -> String {
        let first = Self.md5Hex("\(Self.userName):\(realm):\(password)")
        let second = Self.md5Hex("\(method):\(uri)")
        let response = Self.md5Hex("\(first):\(nonce):\(second)")
        return "Digest username=\"\(Self.userName)\", realm=\"\(realm)\", nonce=\"\(nonce)\", uri=\"\(uri)\", response=\"\(response)\""
    }

    /// The MD5 of `text`'s UTF-8 in lower-case hex.
    static func md5Hex(_ text: String) -> String {
        Insecure.MD5.hash(data: Array(text.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
