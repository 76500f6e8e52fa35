import Dispatch
import Foundation
import LongformAPIRequests
import Hummingbird
import NIOCore

// The JSON types are sent as they are.
extension StateJSON: ResponseEncodable {}
extension PlaylistJSON: ResponseEncodable {}
extension NowPlayingJSON: ResponseEncodable {}
extension RoutesJSON: ResponseEncodable {}
extension LibraryPageJSON: ResponseEncodable {}
extension TrackJSON: ResponseEncodable {}
extension ScanJSON: ResponseEncodable {}
extension VolumeJSON: ResponseEncodable {}
extension SpeakerJSON: ResponseEncodable {}
extension SpeakersJSON: ResponseEncodable {}
extension ItemJSON: ResponseEncodable {}

/// The items an add request created.
struct AddedItemsJSON: Codable, Sendable, ResponseEncodable {
    var items: [ItemJSON]
}

/// Runs `body`, which may wait on the player or SQLite, on a Dispatch thread: the few threads
/// that run async code (two on this machine) must never block. (Untyped `throws`: Swift 6.3's
/// optimizer crashes on this function with typed throws in the handlers' closures.)
func offloaded<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global(qos: .userInitiated).async {
            continuation.resume(with: Result { try body() })
        }
    }
}

extension Request {
    /// The body as `T`; an empty body is nil. Malformed JSON is a 400 naming what was wrong.
    func decodeBody<T: Decodable>(as type: T.Type, context: ServerRequestContext) async throws -> T? {
        let buffer: ByteBuffer
        do {
            buffer = try await body.collect(upTo: context.maxUploadSize)
        } catch is NIOTooManyBytesError {
            throw APIError.tooLarge("the request body is over \(context.maxUploadSize) bytes")
        }
        guard buffer.readableBytes > 0 else { return nil }
        do {
            return try MalformedRequestBody.decode(type, from: Data(buffer.readableBytesView))
        } catch {
            throw APIError.badRequest("malformed request body: \(error)")
        }
    }

    /// The body as `T`, which must be there.
    func requireBody<T: Decodable>(as type: T.Type, context: ServerRequestContext) async throws -> T {
        guard let value = try await decodeBody(as: type, context: context) else { throw APIError.badRequest("the request needs a JSON body") }
        return value
    }
}

extension Parameters {
    /// The `{id}` of a playlist item; a malformed one names no item (404).
    func itemID() throws(APIError) -> UUID {
        let text = get("id") ?? ""
        guard let id = UUID(uuidString: text) else { throw .notFound("no playlist item has id \(text)") }
        return id
    }
}

/// Registers the JSON API on `router`.
func addAPIEndpoints(to router: Router<ServerRequestContext>, controller: PlayerController) {
    let api = router.group("api")

    api.get("state") { _, _ in try await offloaded { controller.state() } }
    api.get("now-playing") { _, _ in try await offloaded { controller.nowPlaying() } }
    api.get("now-playing/artwork") { _, _ -> Response in
        let artwork = try await offloaded { try controller.nowPlayingArtwork() }
        return Response(status: .ok, headers: [.contentType: artwork.mimeType, .cacheControl: "no-cache"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: artwork.data)))
    }

    // The playlist.
    api.get("playlist") { _, _ in try await offloaded { controller.playlist() } }
    api.post("playlist/items") { request, context -> EditedResponse<AddedItemsJSON> in
        let body = try await request.requireBody(as: AddItemsRequest.self, context: context)
        let items = try await offloaded { try controller.add(body) }
        return EditedResponse(status: .created, response: AddedItemsJSON(items: items))
    }
    api.delete("playlist/items/{id}") { _, context -> HTTPResponse.Status in
        let id = try context.parameters.itemID()
        try await offloaded { try controller.remove(id: id) }
        return .noContent
    }
    api.post("playlist/items/{id}/move") { request, context -> HTTPResponse.Status in
        let id = try context.parameters.itemID()
        let body = try await request.requireBody(as: MoveRequest.self, context: context)
        try await offloaded { try controller.move(id: id, to: body.index) }
        return .noContent
    }
    api.delete("playlist") { _, _ -> HTTPResponse.Status in
        try await offloaded { controller.clear() }
        return .noContent
    }

    // Transport.
    api.post("transport/play") { request, context -> HTTPResponse.Status in
        let body = try await request.decodeBody(as: PlayRequest.self, context: context)
        try await offloaded { try controller.play(id: body?.id) }
        return .noContent
    }
    api.post("transport/pause") { _, _ -> HTTPResponse.Status in
        try await offloaded { controller.pause() }
        return .noContent
    }
    api.post("transport/stop") { _, _ -> HTTPResponse.Status in
        try await offloaded { controller.stop() }
        return .noContent
    }
    api.post("transport/next") { _, _ -> HTTPResponse.Status in
        try await offloaded { try controller.next() }
        return .noContent
    }
    api.post("transport/previous") { _, _ -> HTTPResponse.Status in
        try await offloaded { try controller.previous() }
        return .noContent
    }
    api.post("transport/seek") { request, context -> HTTPResponse.Status in
        let body = try await request.requireBody(as: SeekRequest.self, context: context)
        try await offloaded { try controller.seek(body) }
        return .noContent
    }

    // Volume and routes.
    api.get("volume") { _, _ in try await offloaded { controller.volume() } }
    api.put("volume") { request, context -> VolumeJSON in
        let body = try await request.requireBody(as: VolumeRequest.self, context: context)
        return try await offloaded { try controller.setVolume(body) }
    }
    api.get("speakers") { _, _ in try await offloaded { controller.speakers() } }
    api.put("speakers/:index/volume") { request, context -> SpeakerJSON in
        let index = try context.parameters.speakerIndex()
        let body = try await request.requireBody(as: SpeakerVolumeRequest.self, context: context)
        return try await offloaded { try controller.setVolume(body.volume, ofSpeaker: index) }
    }
    api.get("routes") { _, _ in try await offloaded { controller.routes() } }
    api.put("route") { request, context -> RoutesJSON in
        let body = try await request.requireBody(as: RouteRequest.self, context: context)
        return try await offloaded { try controller.selectRoute(body.route) }
    }

    // The library.
    api.get("library") { request, _ -> LibraryPageJSON in
        let query = request.uri.queryParameters
        let limit = try query["limit"].map { text in
            guard let limit = Int(text), (1...1000).contains(limit) else { throw APIError.badRequest("limit \(text) is not a number from 1 to 1000") }
            return limit
        } ?? 200
        let offset = try query["offset"].map { text in
            guard let offset = Int(text), offset >= 0 else { throw APIError.badRequest("offset \(text) is not a number of tracks") }
            return offset
        } ?? 0
        // Hummingbird has decoded the query already.
        let search = query["search"].map(String.init)
        return try await offloaded { try controller.libraryPage(search: search, limit: limit, offset: offset) }
    }
    api.get("library/{trackId}") { _, context -> TrackJSON in
        let id = try context.parameters.trackID()
        return try await offloaded { try controller.libraryTrack(id: id) }
    }
    api.get("library/{trackId}/artwork") { _, context -> Response in
        let id = try context.parameters.trackID()
        let artwork = try await offloaded { try controller.libraryArtwork(id: id) }
        return Response(status: .ok, headers: [.contentType: artwork.mimeType], body: ResponseBody(byteBuffer: ByteBuffer(bytes: artwork.data)))
    }
    api.post("library/rescan") { _, _ -> ScanJSON in
        try await offloaded { try controller.rescanLibrary() }
    }
}

extension Parameters {
    /// The `{index}` of a speaker of the route; a malformed one names no speaker (404).
    func speakerIndex() throws(APIError) -> Int {
        let text = get("index") ?? ""
        guard let index = Int(text) else { throw .notFound("no speaker has index \(text) (GET /api/speakers lists them)") }
        return index
    }

    /// The `{trackId}` of a library track.
    func trackID() throws(APIError) -> Int64 {
        let text = get("trackId") ?? ""
        guard let id = Int64(text) else { throw .notFound("no library track has id \(text)") }
        return id
    }
}
