/// The `HOST:PORT` and `[ADDRESS]:PORT` notation shared by the options and routes that name a
/// network endpoint; each caller applies its own rules to the parts (which ports, a default host).
public enum HostAndPort {
    /// The host (without brackets) and the port text of `text`, or nil when there is no `:PORT`,
    /// or a host outside brackets has a colon of its own (an IPv6 address must be bracketed).
    public static func split(_ text: Substring) -> (host: Substring, port: Substring)? {
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            return (text[text.index(after: text.startIndex)..<close], rest.dropFirst())
        }
        guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
        return (text[..<colon], text[text.index(after: colon)...])
    }
}
