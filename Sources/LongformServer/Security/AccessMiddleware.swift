import Hummingbird

/// What every request passes before it reaches the API:
/// - with a token configured, the token, from `Authorization: Bearer …`, the `longform_token`
///   cookie or a `token` query parameter (for the first page load); a valid query token is put in
///   the cookie so that the page's own requests and its event stream carry it;
/// - without a token (loopback), the `Host` header must name loopback: a page whose own host name
///   was made to resolve to 127.0.0.1 (DNS rebinding) is refused;
/// - a request with a body must say `Content-Type: application/json`: a web page elsewhere cannot
///   send that to the server without the browser asking first, so it cannot steer the player.
struct AccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: AccessToken?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var setsCookie = false
        if let token {
            switch presentedToken(in: request) {
            case .some((let value, let isFromQuery)) where token.matches(value):
                setsCookie = isFromQuery
            case .some:
                throw APIError(statusCode: 401, message: "the token is wrong")
            case nil:
                throw APIError(statusCode: 401, message: "a token is required: send Authorization: Bearer TOKEN (printed when the server started)")
            }
        }
        if token == nil, let host = request.head.authority, !Self.isLoopback(host: host) {
            throw APIError(statusCode: 403, message: "Host \(host) is not a loopback address; without a token only 127.0.0.1, ::1 and localhost are served")
        }
        if hasBody(request), !isJSON(request) {
            throw APIError(statusCode: 415, message: "a request body must be JSON, sent with Content-Type: application/json")
        }
        var response = try await next(request, context)
        if setsCookie, let token {
            response.headers[.setCookie] = "\(AccessToken.cookieName)=\(token.value); Path=/; HttpOnly; SameSite=Strict"
        }
        return response
    }

    private func presentedToken(in request: Request) -> (Substring, isFromQuery: Bool)? {
        if let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") {
            return (authorization.dropFirst("Bearer ".count), false)
        }
        for cookies in request.headers[values: .cookie] {
            for cookie in cookies.split(separator: ";") {
                let pair = cookie.trimmingPrefix(while: { $0 == " " })
                if pair.hasPrefix(AccessToken.cookieName + "=") { return (pair.dropFirst(AccessToken.cookieName.count + 1), false) }
            }
        }
        if let query = request.uri.queryParameters["token"] { return (query, true) }
        return nil
    }

    /// `127.0.0.1:8080`, `localhost`, `[::1]:8080`: loopback, whatever the port.
    static func isLoopback(host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") {
            name = String(name.dropFirst().prefix { $0 != "]" })
        } else if let colon = name.lastIndex(of: ":") {
            name = String(name[..<colon])
        }
        return name == "localhost" || name == "::1" || name.hasPrefix("127.")
    }

    private func hasBody(_ request: Request) -> Bool {
        if let length = request.headers[.contentLength] { return length != "0" }
        return request.headers[.transferEncoding] != nil
    }

    private func isJSON(_ request: Request) -> Bool {
        guard let type = request.headers[.contentType]?.lowercased() else { return false }
        return type == "application/json" || type.hasPrefix("application/json;")
    }
}
