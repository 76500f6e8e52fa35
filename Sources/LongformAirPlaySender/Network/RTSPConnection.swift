import LongformAirPlayProtocol
import NIOCore
import NIOPosix
import Synchronization

/// Why an RTSP exchange with a receiver failed: each names the receiver and what it did.
public struct AirPlayError: Error, CustomStringConvertible, Sendable {
    /// The receiver (`airplay:10.0.0.2:5000`).
    public var receiver: String
    /// What went wrong.
    public var reason: String

    /// An error of `receiver`.
    public init(receiver: String, reason: String) {
        self.receiver = receiver
        self.reason = reason
    }

    /// `"airplay:10.0.0.2:5000: ANNOUNCE answered 403 Forbidden"`.
    public var description: String { "\(receiver): \(reason)" }
}

/// One RTSP control connection to a receiver, over SwiftNIO: requests go one at a time and each
/// call waits for its answer (the session's thread calls it, never an event loop). It numbers
/// requests (`CSeq`), adds the headers every AirPlay sender sends, keeps the `Session` the
/// receiver gives, and answers a Digest challenge once with the password, if it has one.
final class RTSPConnection: @unchecked Sendable {
    /// The receiver, as errors name it.
    let receiverName: String
    /// The address this end of the connection has (for the SDP and the session's URL).
    let localAddress: String
    /// The receiver's address, as connected.
    let remoteAddress: String

    private let channel: Channel
    private let handler: ResponseHandler
    private let password: String?
    private let commonHeaders: RTSPHeaders
    private let state = Mutex(State())

    private struct State {
        var sequence = 0
        var session: String?
        var challenge: RTSPDigestChallenge?
    }

    /// How long a request waits for its answer (seconds).
    static let answerTimeout = 5.0

    private init(receiverName: String, channel: Channel, handler: ResponseHandler, password: String?, commonHeaders: RTSPHeaders) {
        self.receiverName = receiverName
        self.channel = channel
        self.handler = handler
        self.password = password
        self.commonHeaders = commonHeaders
        localAddress = channel.localAddress?.ipAddress ?? "0.0.0.0"
        remoteAddress = channel.remoteAddress?.ipAddress ?? "0.0.0.0"
    }

    /// Connects to `host`:`port` within `timeout` seconds.
    static func connect(to host: String, port: Int, receiverName: String, password: String?, commonHeaders: RTSPHeaders,
                        timeout: Double = 3) throws(AirPlayError) -> RTSPConnection {
        let handler = ResponseHandler()
        do {
            let channel = try ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton.next())
                .connectTimeout(.milliseconds(Int64(timeout * 1000)))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(handler) } }
                .connect(host: host, port: port).wait()
            return RTSPConnection(receiverName: receiverName, channel: channel, handler: handler, password: password, commonHeaders: commonHeaders)
        } catch {
            throw AirPlayError(receiver: receiverName, reason: "cannot connect to \(host):\(port): \(error)")
        }
    }

    /// Sends `request` and returns the answer; throws when none comes, the connection fails, or
    /// (unless `acceptingFailure`) the status is not 2xx. A 401 with a Digest challenge is
    /// answered once with the password; without one, the error says a password is needed.
    @discardableResult
    func send(_ request: RTSPRequest, acceptingFailure: Bool = false) throws(AirPlayError) -> RTSPResponse {
        var response = try exchange(request)
        if response.statusCode == 401 {
            guard let challenge = response.headers["WWW-Authenticate"].flatMap(RTSPDigestChallenge.init(parsing:)) else {
                throw AirPlayError(receiver: receiverName, reason: "\(request.method) answered 401 without a Digest challenge")
            }
            guard password != nil else {
                throw AirPlayError(receiver: receiverName, reason: "asks for a password; give it with ?password=... or \(AirPlayRoute.passwordVariable)")
            }
            state.withLock { $0.challenge = challenge }
            response = try exchange(request)
            if response.statusCode == 401 { throw AirPlayError(receiver: receiverName, reason: "refused the password (\(request.method) answered 401)") }
        }
        if let session = response.headers["Session"] {
            state.withLock { $0.session = (session.split(separator: ";").first ?? Substring(session)).trimmingSpaces() }
        }
        guard acceptingFailure || response.isSuccess else {
            throw AirPlayError(receiver: receiverName, reason: "\(request.method) answered \(response.statusLine)")
        }
        return response
    }

    private func exchange(_ request: RTSPRequest) throws(AirPlayError) -> RTSPResponse {
        var request = request
        let (sequence, session, challenge) = state.withLock { state in
            state.sequence += 1
            return (state.sequence, state.session, state.challenge)
        }
        var headers = RTSPHeaders()
        headers.add("CSeq", String(sequence))
        for (name, value) in commonHeaders { headers.add(name, value) }
        if let session { headers.add("Session", session) }
        if let challenge, let password {
            headers.add("Authorization", challenge.authorization(method: request.method, uri: request.uri, password: password))
        }
        for (name, value) in request.headers { headers.add(name, value) }
        request.headers = headers
        let answer = handler.expectResponse(on: channel.eventLoop)
        channel.writeAndFlush(ByteBuffer(bytes: request.encoded()), promise: nil)
        // A late answer would be taken for the next request's: the connection closes with the timeout.
        let method = request.method
        let timeout = channel.eventLoop.scheduleTask(in: .milliseconds(Int64(Self.answerTimeout * 1000))) { [channel, receiverName] in
            answer.fail(AirPlayError(receiver: receiverName, reason: "no answer to \(method) within \(Int(Self.answerTimeout)) s"))
            channel.close(promise: nil)
        }
        defer { timeout.cancel() }
        do {
            return try answer.futureResult.wait()
        } catch let error as AirPlayError {
            throw error
        } catch {
            throw AirPlayError(receiver: receiverName, reason: "\(request.method): \(error)")
        }
    }

    /// Whether the connection is still open.
    var isActive: Bool { channel.isActive }

    /// Closes the connection.
    func close() { channel.close(promise: nil) }

    /// Feeds what the receiver sends to a parser and hands each response to the oldest request waiting.
    private final class ResponseHandler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        // Touched on the channel's event loop only.
        private var parser = RTSPResponseParser()
        private var waiting: [EventLoopPromise<RTSPResponse>] = []
        private var failure: AirPlayProtocolError?
        private var isClosed = false

        func expectResponse(on eventLoop: EventLoop) -> EventLoopPromise<RTSPResponse> {
            let promise = eventLoop.makePromise(of: RTSPResponse.self)
            eventLoop.execute {
                if let failure = self.failure { promise.fail(failure) } else if self.isClosed { promise.fail(ChannelError.ioOnClosedChannel) } else { self.waiting.append(promise) }
            }
            return promise
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            parser.append(buffer.readBytes(length: buffer.readableBytes) ?? [])
            do {
                while let response = try parser.nextResponse() {
                    // An answer nobody waits for (one that came after its timeout) is dropped.
                    if !waiting.isEmpty { waiting.removeFirst().succeed(response) }
                }
            } catch {
                failure = error
                for promise in waiting { promise.fail(error) }
                waiting.removeAll()
                context.close(promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            isClosed = true
            for promise in waiting { promise.fail(ChannelError.ioOnClosedChannel) }
            waiting.removeAll()
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }
    }
}
