import Foundation
import Hummingbird

/// Refusals go out as `{"error": "…"}` with their status.
extension APIError: HTTPResponseError {
    var status: HTTPResponse.Status { HTTPResponse.Status(code: statusCode) }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = (try? JSONEncoder().encode(["error": message])) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
