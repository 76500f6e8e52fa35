/// A refused request: the HTTP status and a sentence that names the culprit. Nothing was changed.
struct APIError: Error, Equatable, CustomStringConvertible {
    /// 400, 403, 404, 409, 413, 415, 503…
    var statusCode: Int
    var message: String

    var description: String { "\(statusCode): \(message)" }

    static func badRequest(_ message: String) -> APIError { APIError(statusCode: 400, message: message) }
    static func forbidden(_ message: String) -> APIError { APIError(statusCode: 403, message: message) }
    static func notFound(_ message: String) -> APIError { APIError(statusCode: 404, message: message) }
    static func conflict(_ message: String) -> APIError { APIError(statusCode: 409, message: message) }
    static func unavailable(_ message: String) -> APIError { APIError(statusCode: 503, message: message) }
}
