/// One RTSP request as the sender writes it. The connection adds `CSeq` and the session's headers.
public struct RTSPRequest: Sendable, Equatable {
    /// `OPTIONS`, `ANNOUNCE`, `SETUP`, `RECORD`, `FLUSH`, `SET_PARAMETER`, `TEARDOWN`, `POST`…
    public var method: String
    /// `*`, or the session's URL (`rtsp://10.0.0.2/1234`), or a path (`/pair-setup`).
    public var uri: String
    /// The headers, in order; `Content-Length` is added from the body.
    public var headers: RTSPHeaders
    /// The body, empty for most requests.
    public var body: [UInt8]

    /// A request of `method` for `uri`.
    public init(method: String, uri: String, headers: RTSPHeaders = RTSPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.uri = uri
        self.headers = headers
        self.body = body
    }

    /// A request whose body is `text` of type `contentType`.
    public init(method: String, uri: String, contentType: String, text: String, headers: RTSPHeaders = RTSPHeaders()) {
        self.init(method: method, uri: uri, headers: headers, body: Array(text.utf8))
        self.headers["Content-Type"] = contentType
    }

    /// The request on the wire: request line, headers (with `Content-Length` when there is a body), blank line, body.
    public func encoded() -> [UInt8] {
        var text = "\(method) \(uri) RTSP/1.0\r\n"
        for (name, value) in headers where name.lowercased() != "content-length" { text += "\(name): \(value)\r\n" }
        if !body.isEmpty { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        return Array(text.utf8) + body
    }
}
