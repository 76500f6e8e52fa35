import Foundation
import Hummingbird

/// Refusals go out as `{"error": "…"}` with their status.
extension APIError: HTTPResponseError {
    var status: HTTPResponse.Status { HTTPResponse.Status(code: statusCode) }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = (try? JSONEncoder().encode(["error": message])) ?? Data("{}".utf8)
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
