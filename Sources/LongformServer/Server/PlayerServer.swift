import Foundation
import Hummingbird
import Logging
import LongformCore
import LongformLibrary
import LongformStore
import ServiceLifecycle

/// `longform serve`: one player with its state in SQLite, the music library, the JSON API, the
/// live event stream and the web player, over HTTP (Hummingbird).
public final class PlayerServer: Sendable {
    /// Why the server could not start; names the culprit.
    public struct StartError: Error, CustomStringConvertible, Sendable {
        /// What went wrong.
        public var description: String
    }

    /// Keep-alive comments go to the event streams this often.
    static let keepAliveInterval: Duration = .seconds(15)

    /// What it was started with.
    public let configuration: ServerConfiguration
    /// The token requests must carry (nil on loopback unless one was given).
    public let token: String?
    private let controller: PlayerController
    private let library: MusicLibrary
    private let files: WebFiles
    private let stopRequests: AsyncStream<Void>.Continuation
    private let stops: AsyncStream<Void>
    private let logger = Logger(label: LogLabel.server)

    /// Opens the state, the library and the route. Beyond loopback a token is required: the one
    /// given, or a generated one (read it from `token`).
    public init(configuration: ServerConfiguration) throws(StartError) {
        self.configuration = configuration
        token = configuration.token ?? (configuration.isLoopback ? nil : AccessToken.generate().value)
        let store: PlayerStateStore
        do { store = try PlayerStateStore(directory: configuration.stateDirectory) } catch {
            throw StartError(description: "cannot use the state directory: \(error)")
        }
        let directories: MusicDirectories
        do { directories = try MusicDirectories(configuration.musicDirectories) } catch {
            throw StartError(description: "music directory: \(error)")
        }
        let events = EventHub()
        library = MusicLibrary(directories: directories, store: store) { summary in
            events.publish(ServerEvent(name: "library", payload: ScanJSON(summary)))
        }
        do { files = try WebFiles() } catch { throw StartError(description: error.message) }
        do {
            controller = try PlayerController(store: store, library: library, events: events, route: configuration.route,
                                              sampleRate: configuration.sampleRate)
        } catch {
            throw StartError(description: error.message)
        }
        (stops, stopRequests) = AsyncStream.makeStream(of: Void.self)
    }

    /// Serves until `stop()` or the task is cancelled; `onRunning` gets the bound port. On the
    /// way out the event streams end and the state is saved.
    public func run(onRunning: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        // HEAD is answered wherever GET is (RFC 9110), by the GET endpoint without its body.
        let router = Router(context: ServerRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: AccessMiddleware(token: token.map(AccessToken.init)))
        addAPIEndpoints(to: router, controller: controller)
        addEventEndpoint(to: router, controller: controller)
        addWebEndpoints(to: router, files: files)
        // Inside the access check (a stranger learns nothing of which methods a path takes); added
        // last, it wraps only the router's "no such route" answer, which is what it rewrites.
        router.add(middleware: MethodCheckMiddleware(routes: router.routes))
        var applicationLogger = Logger(label: LogLabel.server)
        applicationLogger.logLevel = .warning
        let application = Application(router: router,
                                      configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "longform"),
                                      onServerRunning: { channel in onRunning(channel.localAddress?.port ?? 0) },
                                      logger: applicationLogger)
        if configuration.isWatchingMusicDirectories { library.startWatching() } else { library.rescanInBackground() }
        defer {
            library.stopWatching()
            controller.shutDown()
        }
        let events = controller.events
        let services = ServiceGroup(configuration: .init(services: [application], logger: applicationLogger))
        // Each child says whether it was the server.
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { try await services.run(); return true }
            group.addTask { [stops] in
                for await _ in stops {}
                // Open event streams would hold the graceful shutdown forever: end them first.
                events.finishAll()
                await services.triggerGracefulShutdown()
                return false
            }
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: Self.keepAliveInterval)
                    events.sendKeepAlive()
                }
                return false
            }
            // Until the server ends (stopped, or failing to start); then the others.
            while let isServer = try await group.next(), !isServer {}
            events.finishAll()
            group.cancelAll()
        }
    }

    /// Ends `run`.
    public func stop() {
        stopRequests.finish()
    }
}
