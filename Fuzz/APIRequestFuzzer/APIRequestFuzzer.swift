import Foundation
import FuzzSupport
import LongformAPIRequests

/// The HTTP API's request bodies (`MalformedRequestBody.decode`, as every endpoint decodes them)
/// against any bytes a client sends; the first byte picks the request type. Invariants: a body is
/// taken, or refused in the API's words (a key path or "not JSON", never a Swift error's
/// description); what is taken encodes to JSON that decodes to the same request.
enum APIRequestFuzzer {
    static func run(_ input: [UInt8]) {
        guard let choice = input.first else { return }
        let body = Data(input.dropFirst())
        switch choice % 8 {
        case 0: check(AddItemsRequest.self, body)
        case 1: check(MoveRequest.self, body)
        case 2: check(SeekRequest.self, body)
        case 3: check(PlayRequest.self, body)
        case 4: check(SpeakerVolumeRequest.self, body)
        case 5: check(VolumeRequest.self, body)
        case 6: check(RouteRequest.self, body)
        default: check(NewItemRequest.self, body)
        }
    }

    /// Decodes `body` as `type`: the request, or nil after a refusal that says why.
    @discardableResult
    static func check<T: Codable & Equatable>(_ type: T.Type, _ body: Data) -> T? {
        let request: T
        do {
            request = try MalformedRequestBody.decode(type, from: body)
        } catch {
            // Swift's own descriptions name types and coding keys ("DecodingError", "CodingKeys(…)").
            let words = error.description
            FuzzInput.require(!words.contains("Error") && !words.contains("CodingKeys") && !words.contains("Optional("),
                              "a refusal not in the API's words for \(printable(body)): \(words)")
            return nil
        }
        // A volume past Float's range becomes infinite, which JSON cannot carry back (the server
        // refuses it as outside 0...1): a request that does not encode is not asked to round-trip.
        guard let encoded = try? JSONEncoder().encode(request) else { return request }
        let again = try? MalformedRequestBody.decode(type, from: encoded)
        FuzzInput.require(again == request, "\(request) from \(printable(body)) comes back as \(String(describing: again))")
        return request
    }

    static func printable(_ body: Data) -> String { String(decoding: body.prefix(200), as: UTF8.self) }
}

/// Runs under libFuzzer or replays saved inputs (see `FuzzInput`).
@main struct APIRequestFuzzerMain {
    static func main() { FuzzInput.main(APIRequestFuzzer.run) }
}
