import Foundation
import LongformTestSupport
import Testing

/// Beyond loopback every request needs the token: the API, the event stream and the web player.
@Suite struct AccessAPITests {
    @Test func listeningBeyondLoopbackRequiresTheTokenEverywhere() throws {
        let running = try RunningServer("token", host: "0.0.0.0")
        let token = try #require(running.token)
        #expect(token.count == 32)
        let anonymous = HTTPTestClient(port: running.port)
        for path in ["/api/state", "/api/playlist", "/api/events", "/", "/web/player.js", "/api/openapi.yaml"] {
            let response = try anonymous.get(path)
            #expect(response.status == 401 && (response.json["error"] as? String)?.contains("token is required") == true, "\(path): \(response)")
        }
        #expect(try anonymous.post("/api/transport/play").status == 401)
        let wrong = HTTPTestClient(port: running.port, token: String(token.reversed()))
        #expect(try wrong.get("/api/state").status == 401)
        #expect(try anonymous.get("/api/state?token=\(token.dropLast())x").status == 401)

        // The header, the query (which sets the cookie) and the cookie each let a client in.
        #expect(try running.client.get("/api/state").status == 200)
        let page = try anonymous.get("/?token=\(token)")
        #expect(page.status == 200 && page.text.contains("<html"))
        let cookie = try #require(page.headers["set-cookie"])
        #expect(cookie.hasPrefix("longform_token=\(token)") && cookie.contains("HttpOnly"))
        #expect(try anonymous.request("GET", "/api/state", headers: ["Cookie": "theme=dark; longform_token=\(token)"]).status == 200)
        // A cookie from before a restart does not stand in the way of the new token in the query.
        #expect(try anonymous.request("GET", "/?token=\(token)", headers: ["Cookie": "longform_token=0123"]).status == 200)
        let events = try anonymous.openEventStream(headers: ["Cookie": "longform_token=\(token)"])
        defer { events.close() }
        #expect(events.status == 200 && events.next(named: "state") != nil)
    }

    @Test func onLoopbackNoTokenIsNeededAndTheDocumentsAreServed() throws {
        let running = try RunningServer("loopback")
        #expect(running.token == nil)
        let client = running.client
        let page = try client.get("/")
        #expect(page.status == 200 && page.headers["content-type"]?.hasPrefix("text/html") == true && page.text.contains("player.js"))
        #expect(try client.get("/web/player.js").status == 200)
        // A page whose host name resolves to 127.0.0.1 (DNS rebinding) is not this server's page.
        let rebound = try client.request("POST", "/api/transport/stop", headers: ["Host": "evil.example:\(running.port)"])
        #expect(rebound.status == 403 && (rebound.json["error"] as? String)?.contains("evil.example") == true, "\(rebound)")
        #expect(try client.request("GET", "/api/state", headers: ["Host": "localhost:\(running.port)"]).status == 200)
        #expect(try client.request("GET", "/api/state", headers: ["Host": "127.evil.example:\(running.port)"]).status == 403)
        // A page of another site cannot send commands, with or without a body; the server's own page can.
        for headers in [["Origin": "http://evil.example"], ["Origin": "http://127.0.0.1:1"], ["Origin": "null"], ["Sec-Fetch-Site": "cross-site"]] {
            let response = try client.request("POST", "/api/transport/stop", headers: headers)
            #expect(response.status == 403, "\(headers): \(response)")
        }
        #expect(try client.request("POST", "/api/transport/stop", headers: ["Origin": "http://127.0.0.1:\(running.port)", "Sec-Fetch-Site": "same-origin"]).status == 204)
        #expect(try client.get("/web/player.css").status == 200)
        let openAPI = try client.get("/api/openapi.yaml")
        #expect(openAPI.status == 200 && openAPI.text.hasPrefix("openapi: 3."))
        // Every path the router answers is in the document.
        for path in ["/api/state", "/api/now-playing", "/api/now-playing/artwork", "/api/playlist", "/api/playlist/items", "/api/playlist/items/{id}",
                     "/api/playlist/items/{id}/move", "/api/transport/play", "/api/transport/pause", "/api/transport/stop", "/api/transport/next",
                     "/api/transport/previous", "/api/transport/seek", "/api/volume", "/api/routes", "/api/route", "/api/library",
                     "/api/library/{trackId}", "/api/library/{trackId}/artwork", "/api/library/rescan", "/api/events"] {
            #expect(openAPI.text.contains("\n  \(path):"), "\(path) is not in openapi.yaml")
        }
    }
}
