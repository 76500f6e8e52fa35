import Foundation
import Hummingbird

/// The web player's files and the OpenAPI document, read once from the module's resources.
struct WebFiles: Sendable {
    /// A file's bytes and type.
    struct File: Sendable {
        var bytes: [UInt8]
        var contentType: String
    }

    /// By URL path: `/`, `/web/player.js`, `/api/openapi.yaml`.
    let files: [String: File]

    /// Reads the resources; a missing one is a build defect, reported by name.
    init() throws(APIError) {
        guard let root = Bundle.module.url(forResource: "Resources", withExtension: nil) else {
            throw APIError.unavailable("the server's resources are missing")
        }
        var files: [String: File] = [:]
        let entries: [(path: String, resource: String, type: String)] = [
            ("/", "web/index.html", "text/html; charset=utf-8"),
            ("/web/player.js", "web/player.js", "text/javascript; charset=utf-8"),
            ("/web/player.css", "web/player.css", "text/css; charset=utf-8"),
            ("/api/openapi.yaml", "openapi.yaml", "application/yaml; charset=utf-8"),
        ]
        for entry in entries {
            let url = root.appendingPathComponent(entry.resource)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw APIError.unavailable("the server's resource \(url.path) is missing")
            }
            files[entry.path] = File(bytes: Array(data), contentType: entry.type)
        }
        self.files = files
    }
}

/// Registers the web player (`/` and `/web/…`) and `/api/openapi.yaml`.
func addWebEndpoints(to router: Router<ServerRequestContext>, files: WebFiles) {
    for (path, file) in files.files {
        router.get(RouterPath(path)) { _, _ in
            Response(status: .ok, headers: [.contentType: file.contentType, .cacheControl: "no-cache"],
                     body: ResponseBody(byteBuffer: ByteBuffer(bytes: file.bytes)))
        }
    }
}
