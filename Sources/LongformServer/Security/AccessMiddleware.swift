import Foundation
import Hummingbird

/// What every request passes before it reaches the API:
/// - with a token configured, the token, from a `token` query parameter (for the first page load),
///   `Authorization: Bearer …` or the `longform_token` cookie; a valid query token is put in the
///   cookie so that the page's own requests and its event stream carry it;
/// - without a token (loopback), the `Host` header must name loopback: a page whose own host name
///   was made to resolve to 127.0.0.1 (DNS rebinding) is refused;
/// - a command (anything but GET and HEAD) from a browser must come from the server's own pages:
///   its `Origin` must name this server and `Sec-Fetch-Site` must not say `cross-site` (programs
///   such as curl send neither);
/// - a request with a body must say `Content-Type: application/json`.
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
        } else {
            guard let host = request.head.authority else { throw APIError(statusCode: 400, message: "the request has no Host header") }
            if !Self.isLoopback(host: host) {
                throw APIError(statusCode: 403, message: "Host \(host) is not a loopback address; without a token only 127.0.0.1, ::1 and localhost are served")
            }
        }
        if request.method != .get && request.method != .head, let refusal = crossSiteRefusal(request) {
            throw APIError(statusCode: 403, message: refusal)
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

    /// Why a command sent by a browser from another site is refused, or nil. Browsers send
    /// `Origin` (and `Sec-Fetch-Site`) with every command; programs such as curl send neither.
    private func crossSiteRefusal(_ request: Request) -> String? {
        if request.headers[.init("Sec-Fetch-Site")!] == "cross-site" { return "commands from another site's page are refused" }
        // An opaque origin ("null", a sandboxed page) matches no host and is refused.
        guard let origin = request.headers[.origin] else { return nil }
        let originHost = URLComponents(string: origin).map { components -> String in
            let host = components.host.map { $0.contains(":") ? "[\($0)]" : $0 } ?? ""
            return components.port.map { "\(host):\($0)" } ?? host
        }
        guard let originHost, let authority = request.head.authority, originHost.lowercased() == authority.lowercased() else {
            return "a command from the page at \(origin) is refused: only the server's own pages may send commands"
        }
        return nil
    }

    private func presentedToken(in request: Request) -> (Substring, isFromQuery: Bool)? {
        // The query first: a page opened with a new token must win over a cookie a restart made stale.
        if let query = request.uri.queryParameters["token"] { return (query, true) }
        if let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") {
            return (authorization.dropFirst("Bearer ".count), false)
        }
        for cookies in request.headers[values: .cookie] {
            for cookie in cookies.split(separator: ";") {
                let pair = cookie.trimmingPrefix(while: { $0 == " " })
                if pair.hasPrefix(AccessToken.cookieName + "=") { return (pair.dropFirst(AccessToken.cookieName.count + 1), false) }
            }
        }
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
        return ServerConfiguration.isLoopback(name)
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
