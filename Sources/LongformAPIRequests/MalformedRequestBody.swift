import Foundation

/// A request body that is not the JSON its endpoint takes; `description` names what was wrong
/// ("items[0].path should be a string", "not JSON"), in the words the API answers with.
public struct MalformedRequestBody: Error, CustomStringConvertible, Sendable {
    /// What was wrong, naming the key path.
    public let description: String

    /// Decodes `bytes` as `type` the way every endpoint does.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: Data) throws(MalformedRequestBody) -> T {
        do {
            return try JSONDecoder().decode(type, from: bytes)
        } catch let error as DecodingError {
            throw MalformedRequestBody(description: describe(error))
        } catch {
            throw MalformedRequestBody(description: "\(error)")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            guard !keys.isEmpty else { return "the body" }
            return keys.reduce("") { path, key in key.intValue.map { path + "[\($0)]" } ?? (path.isEmpty ? key.stringValue : path + "." + key.stringValue) }
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context.codingPath + [key])) is missing"
        case .typeMismatch(let type, let context): return "\(path(context.codingPath)) should be \(name(of: type))"
        case .valueNotFound(let type, let context): return "\(path(context.codingPath)) should be \(name(of: type)), not null"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not JSON" : "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Double.Type, is Float.Type: "a number"
        case is Bool.Type: "true or false"
        default: "\(type)".lowercased().contains("array") ? "an array" : "an object"
        }
    }
}
