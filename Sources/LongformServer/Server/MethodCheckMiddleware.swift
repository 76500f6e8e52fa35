import Foundation
import Hummingbird

/// Turns the router's bare "no such route" into the API's refusals: a path that exists for other
/// methods answers 405 with an `Allow` header (not 404), and an unknown path 404, both with
/// `{"error": …}` like the API's own. (Added after the endpoints, it wraps only the router's
/// not-found answer: an endpoint's own refusals, a 413 among them, are APIErrors already.)
struct MethodCheckMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The registered routes: a path's components (a `{…}`, `:…` or `*` component matches any
    /// one segment) and its method.
    let routes: [(components: [String], method: HTTPRequest.Method)]

    /// A check against `routes`, as the router lists them once every endpoint is registered.
    init(routes: [Router<Context>.RouteDescription]) {
        self.routes = routes.map { route in
            (route.path.description.split(separator: "/").map(String.init), route.method)
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            if error.status == .notFound {
                let allowed = allowedMethods(forPath: request.uri.path)
                if !allowed.isEmpty {
                    throw APIError(statusCode: 405, message: "\(request.method) is not allowed on \(request.uri.path); use \(allowed.joined(separator: ", "))",
                                   headers: [.allow: allowed.joined(separator: ", ")])
                }
            }
            let message = error.body ?? (error.status == .notFound ? "no such resource: \(request.uri.path)" : error.status.reasonPhrase)
            throw APIError(statusCode: error.status.code, message: message, headers: error.headers)
        }
    }

    /// The methods registered for `path`, in name order; empty when no route has that path. As
    /// the router does, a literal segment wins over a parameter: `/api/library/rescan` is the
    /// rescan's path (POST), not `/api/library/{trackId}`'s (GET).
    func allowedMethods(forPath path: String) -> [String] {
        let segments = path.split(separator: "/")
        let matching = routes.filter { route in
            route.components.count == segments.count && zip(route.components, segments).allSatisfy { pattern, segment in
                Self.isParameter(pattern) || pattern == segment
            }
        }
        // Literal (true) before parameter, segment by segment: the most specific pattern.
        let specificity = { (components: [String]) in components.map { !Self.isParameter($0) } }
        guard let best = matching.map({ specificity($0.components) }).max(by: { $0.lexicographicallyPrecedes($1) { !$0 && $1 } }) else { return [] }
        var methods = Set(matching.filter { specificity($0.components) == best }.map(\.method.rawValue))
        // The router answers HEAD wherever GET is (its HEAD endpoints are made when it is built).
        if methods.contains("GET") { methods.insert("HEAD") }
        return methods.sorted()
    }

    private static func isParameter(_ pattern: String) -> Bool {
        pattern.hasPrefix("{") || pattern.hasPrefix(":") || pattern == "*"
    }
}
