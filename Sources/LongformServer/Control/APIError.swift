import Hummingbird

/// A refused request: the HTTP status and a sentence that names the culprit. Nothing was changed.
struct APIError: Error, Equatable, CustomStringConvertible {
    /// 400, 403, 404, 405, 409, 413, 415, 503…
    var statusCode: Int
    var message: String
    /// Headers the refusal carries (`Allow` with a 405).
    var headers: HTTPFields = [:]

    /// A refusal with `statusCode`, `message` and any `headers`.
    init(statusCode: Int, message: String, headers: HTTPFields = [:]) {
        self.statusCode = statusCode
        self.message = message
        self.headers = headers
    }

    var description: String { "\(statusCode): \(message)" }

    static func badRequest(_ message: String) -> APIError { APIError(statusCode: 400, message: message) }
    static func forbidden(_ message: String) -> APIError { APIError(statusCode: 403, message: message) }
    static func notFound(_ message: String) -> APIError { APIError(statusCode: 404, message: message) }
    static func conflict(_ message: String) -> APIError { APIError(statusCode: 409, message: message) }
    static func tooLarge(_ message: String) -> APIError { APIError(statusCode: 413, message: message) }
    static func unavailable(_ message: String) -> APIError { APIError(statusCode: 503, message: message) }
}
