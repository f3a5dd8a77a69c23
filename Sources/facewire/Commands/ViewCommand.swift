import ArgumentParser
import FacewireHTTP
import FacewireProtocol
import FacewireRuntime
import FacewireView
import Foundation
import Logging
import FacewireTransport

/// `--http-*` flags of the view (and of `local --view`).
struct ViewHTTPOptions: ParsableArguments {
    @Option(help: "Address the page is served on. Keep 127.0.0.1 unless the page must be reached from elsewhere; then set a token.")
    var httpHost: String = "127.0.0.1"

    @Option(help: "A token every request must carry (open the page as /?token=TOKEN; scripts send Authorization: Bearer TOKEN). 16-256 printable characters, no spaces, quotes, commas, semicolons or backslashes.")
    var httpToken: String?

    @Option(help: "A file whose first line is the token (instead of --http-token, which shows in the process list).")
    var httpTokenFile: String?

    @Option(help: "HTTP connections open at once (pages, their live channels, scrapers); more wait in the listen backlog.")
    var httpMaxConnections: Int = HTTPServer.defaultMaxConnections

    /// The token, read and checked.
    func token() throws -> String? {
        var token = httpToken
        if let httpTokenFile {
            guard httpToken == nil else { throw ValidationError("give --http-token or --http-token-file, not both") }
            guard let text = try? String(contentsOfFile: httpTokenFile, encoding: .utf8) else {
                throw ValidationError("--http-token-file \(httpTokenFile): cannot read it")
            }
            token = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        }
        guard let token else {
            if !["127.0.0.1", "::1", "localhost"].contains(httpHost) {
                FileHandle.standardError.write(Data("warning: the view is served on \(httpHost) without --http-token: anyone who reaches it sees the cameras\n".utf8))
            }
            return nil
        }
        let forbidden = Set(" \"',;\\".utf8)
        guard (16...256).contains(token.utf8.count), token.utf8.allSatisfy({ (0x21...0x7E).contains($0) && !forbidden.contains($0) }) else {
            throw ValidationError("the HTTP token must be 16-256 printable characters without spaces, quotes, commas, semicolons or backslashes")
        }
        return token
    }

    /// The server of the page, its live channel, `/metrics` and `/healthz`.
    func server(port: Int, node: ViewNode, logger: Logger, onRunning: @escaping @Sendable (String) -> Void) throws -> HTTPServer {
        guard (0...65535).contains(port) else { throw ValidationError("the HTTP port must be 0...65535") }
        guard (1...65536).contains(httpMaxConnections) else { throw ValidationError("--http-max-connections must be 1...65536") }
        let token = try token()
        Observability.bootstrap()
        let host = httpHost
        // The page's live channel is long-lived; other requests are bounded by the usual deadline.
        let configuration = HTTPServer.Configuration(host: host, port: port, maxConnections: httpMaxConnections)
        return HTTPServer(
            configuration: configuration, logger: logger,
            onRunning: { bound in
                let shown = host.contains(":") ? "[\(host)]" : host
                onRunning("http://\(shown):\(bound)/")
            },
            mount: { routes in
                HTTPServer.mountObservability(on: routes) { node.liveness.health() }
                ViewRoutes.mount(on: routes, node: node, token: token)
            },
            webSocket: { routes in ViewRoutes.mountWebSocket(on: routes, node: node, token: token) })
    }
}

struct ViewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "view",
        abstract: "Serve a live view of every stream in the browser: video with faces boxed and labelled, events, statistics, snapshots and face crops.",
        discussion: """
            The view reads the collector's results stream and each capture node's preview (capture --preview-fps), \
            joins every previewed frame with its own result, and serves the page on http://HTTP-HOST:HTTP-PORT/. \
            GET /streams/ID/snapshot.jpg is the newest processed frame with faces drawn in (?faces=0: clean); \
            GET /streams/ID/tracks/TRACKING_ID.jpg is that track's best face, upright and level. /metrics and \
            /healthz are served too. With CURVE the view is a client like tail: its key must be in the collector's \
            and the capture nodes' --curve-allow.
            """
    )

    @Option(help: CollectorList.help)
    var collector: String

    @Option(help: "Port the page is served on (0: any free port, printed).")
    var httpPort: Int = 8080

    @OptionGroup(title: "HTTP") var http: ViewHTTPOptions

    @Option(help: "Write each track's best face (JPEG) and a JSON sidecar of its attributes into this directory when it leaves, named STREAM_EPOCH_ID.")
    var saveFaces: String?

    @Option(help: "Most capture nodes whose previews are read.")
    var maxCaptures: Int = CaptureDirectory.defaultMaxEntries

    @OptionGroup(title: "Security (CURVE)") var curve: CurveOptions
    @OptionGroup var log: LogOptions

    func validate() throws {
        try CollectorList.validate(collector)
        if let saveFaces {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: saveFaces, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--save-faces \(saveFaces): no such directory")
            }
        }
        guard (1...4096).contains(maxCaptures) else { throw ValidationError("--max-captures must be 1...4096") }
    }

    func run() async throws {
        let logger = try log.makeLogger("facewire.view")
        var configuration = ViewNode.Configuration(collector: ShardMap.flattened(collector), security: try curve.security(needs: .serverKey))
        configuration.saveFaces = saveFaces
        configuration.maxCaptures = maxCaptures
        let node = ViewNode(configuration: configuration, logger: logger)
        let server = try http.server(port: httpPort, node: node, logger: logger) { url in
            logger.info("view serving", metadata: ["url": "\(url)"])
        }
        try await NodeRunner.run("view", logger: logger, server: server) { stop in try node.run(stop: stop) }
    }
}

/// `facewire snapshot`: the newest processed frame of a stream, faces drawn in, into a file (as the view's
/// `/streams/ID/snapshot.jpg`).
struct SnapshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Write the next processed frame of a stream that has a preview, with its faces drawn in, to a JPEG file."
    )

    @Option(help: CollectorList.help)
    var collector: String

    @Option(help: "The stream.")
    var stream: String

    @Option(name: .shortAndLong, help: "The JPEG file to write.")
    var output: String

    @Flag(help: "Leave the faces out (the frame alone, upright).")
    var noFaces: Bool = false

    @Option(help: "Seconds to wait for a frame before giving up.")
    var timeout: Double = 15

    @OptionGroup(title: "Security (CURVE)") var curve: CurveOptions
    @OptionGroup var log: LogOptions

    func validate() throws {
        guard Wire.isValidStreamID(stream) else { throw ValidationError("--stream: not a stream id") }
        try CollectorList.validate(collector)
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be in (0, 3600]") }
    }

    func run() async throws {
        let logger = try log.makeLogger("facewire.snapshot")
        let node = ViewNode(configuration: .init(collector: ShardMap.flattened(collector), security: try curve.security(needs: .serverKey)), logger: logger)
        let stop = StopToken()
        let thread = Thread { try? node.run(stop: stop) }
        thread.start()
        defer { stop.stop() }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let (jpeg, seq) = await node.snapshot(stream, faces: !noFaces) {
                try Data(jpeg).write(to: URL(fileURLWithPath: output))
                print("wrote \(output): \(stream) seq \(seq), \(jpeg.count) bytes")
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ValidationError("no processed frame of \(stream) with a preview within \(timeout) s (is the capture node's --preview-fps above 0?)")
    }
}
