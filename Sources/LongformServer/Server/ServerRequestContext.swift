import Foundation
import Hummingbird

/// The request context of the API: Hummingbird's basic one, with request bodies capped and JSON
/// written with sorted keys (the same state reads the same, byte for byte).
struct ServerRequestContext: RequestContext {
    /// The largest request body accepted; more gets 413. An add request of 1,000 items fits.
    static let maximumBodySize = 256 * 1024

    var coreContext: CoreRequestContextStorage

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    var maxUploadSize: Int { Self.maximumBodySize }

    var responseEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
