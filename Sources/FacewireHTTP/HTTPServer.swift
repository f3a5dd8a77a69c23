import FacewireRuntime
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

/// The one HTTP server of a node (`--metrics-port`): Hummingbird 2 on SwiftNIO, run as a `Service` in the node's
/// `ServiceGroup`. Every role mounts `/metrics` and `/healthz` (``HTTPServer/mountObservability(on:health:)``); other
/// parts (the live view) mount their routes on the same router.
///
/// Connections are served concurrently on NIO's event loops, so a slow or silent client never delays another.
/// One ``Configuration/timeout`` bounds what a client can hold a connection with:
/// - read and idle: Hummingbird's HTTP/1 idle timeout (`HTTP1Channel.Configuration.idleTimeout`, whose
///   `HTTPConnectionStateHandler` closes a connection when no request part — head, body chunk — has been decoded for
///   that long): half a request line that stalls, a connection that sends nothing, a kept-alive connection left idle;
/// - write: ``ResponseDeadlineHandler`` closes a connection whose response has not been taken by the client within the
///   timeout of its request (Hummingbird's idle timeout spares connections with a request in progress).
/// At most ``Configuration/maxConnections`` are open at once: further ones wait in the listen backlog until one closes;
/// each time the cap is reached it is counted (`facewire_http_connections_capped_total`) and logged at most once per
/// 10 s.
public struct HTTPServer: Service, CustomStringConvertible {
    /// Where and how the server listens.
    public struct Configuration: Sendable {
        /// The address to bind (`0.0.0.0`, `127.0.0.1`, `::`, a host name).
        public var host: String
        /// The port; 0 binds any free port (the bound one is passed to `onRunning`).
        public var port: Int
        /// How long a connection may go without a complete request part, or with a response the client does not
        /// take, before it is closed (read, idle and write timeout).
        public var timeout: Duration
        /// Connections open at once; more wait in the backlog.
        public var maxConnections: Int
        /// Pending connections the kernel queues.
        public var backlog: Int

        /// The defaults: ``defaultTimeout``, ``defaultMaxConnections``, a backlog of 256.
        public init(
            host: String = "0.0.0.0", port: Int, timeout: Duration = HTTPServer.defaultTimeout,
            maxConnections: Int = HTTPServer.defaultMaxConnections, backlog: Int = 256
        ) {
            self.host = host
            self.port = port
            self.timeout = timeout
            self.maxConnections = maxConnections
            self.backlog = backlog
        }
    }

    /// Default timeout: a scrape or probe sends its request at once and reads the answer; 5 s is generous on a loaded
    /// machine.
    public static let defaultTimeout: Duration = .seconds(5)
    /// Default cap on open connections: far below a process's descriptor limit, far above what scrapers and probes use.
    public static let defaultMaxConnections = 256

    /// The router the server answers from, the requests' context being Hummingbird's basic one.
    public typealias Routes = Router<BasicRequestContext>
    /// The router of the WebSocket upgrades (`HummingbirdWebSocket`), apart from the plain routes.
    public typealias WebSocketRoutes = Router<BasicWebSocketRequestContext>

    private let application: Application<RouterResponder<BasicRequestContext>>
    /// `host:port` as configured (port 0: any free one), for logs.
    public let address: String

    /// A server answering from the routes `mount` adds (a `HEAD` route is made for every `GET`).
    /// - Parameters:
    ///   - onRunning: called with the bound port once the server listens.
    ///   - webSocket: adds the routes that upgrade to a WebSocket; nil: none (plain HTTP/1). An upgraded connection
    ///     leaves the HTTP handlers, and with them the idle and response deadlines: its handler bounds it (pings).
    public init(
        configuration: Configuration, logger: Logger, onRunning: @escaping @Sendable (Int) -> Void = { _ in },
        mount: (Routes) -> Void, webSocket: ((WebSocketRoutes) -> Void)? = nil
    ) {
        address = "\(configuration.host):\(configuration.port)"
        let router = Routes(options: [.autoGenerateHeadEndpoints])
        mount(router)
        let cap = ConnectionCap(limit: configuration.maxConnections, logger: logger)
        let timeout = TimeAmount(configuration.timeout)  // clamped to TimeAmount's range
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ResponseDeadlineHandler(deadline: timeout)], idleTimeout: timeout)
        let server: HTTPServerBuilder
        if let webSocket {
            let upgrades = WebSocketRoutes(context: BasicWebSocketRequestContext.self)
            webSocket(upgrades)
            server = .http1WebSocketUpgrade(
                webSocketRouter: upgrades,
                configuration: .init(http1: http1, ws: .init(maxFrameSize: 1 << 16, autoPing: .enabled(timePeriod: .seconds(10)))))
        } else {
            server = .http1(configuration: http1)
        }
        application = Application(
            router: router,
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), backlog: configuration.backlog,
                availableConnectionsDelegate: cap),
            onServerRunning: { channel in onRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
    }

    /// Serves until graceful shutdown (it then stops accepting, lets requests in progress finish and returns).
    /// - Throws: when the address cannot be bound.
    public func run() async throws {
        try await application.run()
    }

    public var description: String { "HTTPServer" }
}
