import Hummingbird

/// Registers `GET /api/events`: Server-Sent Events, starting with a `state` event that holds
/// everything, then each change as it happens (see `ServerEvent`).
func addEventEndpoint(to router: Router<ServerRequestContext>, controller: PlayerController) {
    router.get("api/events") { _, _ -> Response in
        let subscription = try await offloaded { controller.events.subscribe(first: controller.stateEvent) }
        return Response(status: .ok,
                        headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache", .init("X-Accel-Buffering")!: "no"],
                        body: ResponseBody { writer in
                            // Ends when the hub drops this client, the server stops, or a write
                            // fails because the client left.
                            // Taken, the text is no longer counted by the hub; the write waits
                            // while the socket is full, so at most this one event is uncounted.
                            for await text in subscription.events {
                                subscription.didTake(text)
                                try await writer.write(ByteBuffer(string: text))
                            }
                            try await writer.finish(nil)
                        })
    }
}
