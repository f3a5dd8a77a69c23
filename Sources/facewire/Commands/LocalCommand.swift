import ArgumentParser
import FacewireCapture
import FacewireHTTP
import FacewireProtocol
import FacewireRuntime
import FacewireTail
import FacewireView
import Foundation
import Logging

struct LocalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "local",
        abstract: "Run a whole cluster on this machine and print its results: a collector, N workers and a capture node.",
        discussion: """
            Each node is a separate facewire process on loopback TCP, exactly as on several hosts. The ordered \
            results are printed as JSON Lines; the command exits after the last frame's line when a source that \
            does not loop ends. Without --source it plays the demo footage the setup script installed.
            """
    )

    @Option(help: "What the capture node reads: a camera (/dev/videoN), a video file or URL, a folder of images, one image, or - for an MJPEG stream on standard input (default: the installed demo footage).")
    var source: String?

    @Option(help: "Stream id.")
    var stream: String = "local"

    @Option(help: "Worker processes.")
    var workers: Int = 2

    @Option(help: "Detection threads per worker.")
    var threads: Int = 1

    @Option(help: "Pacing: realtime, max, or frames per second.")
    var fps: String = "realtime"

    @Flag(help: "Start the source again at its end (then stop with Ctrl-C).")
    var loop: Bool = false

    @Option(help: "Stop after this many frames.")
    var frames: Int?

    @Option(help: "Milliseconds the collector waits for a missing frame once a later one is known.")
    var maxDelay: Int = 1000

    @Option(help: "Seconds between per-stream statistics in the stream (printed with --statistics).")
    var statsInterval: Double = 5

    @Option(help: ArgumentHelp(CollectorCommand.maxPulseTracksHelp))
    var maxPulseTracks: Int = 256

    @Flag(help: ArgumentHelp(CollectorCommand.pulseMeshForeheadHelp))
    var pulseMeshForehead = false

    @Option(help: "The capture node's live-view preview: at most this many frames per second, only while a view watches; 0: no preview socket.")
    var previewFps: Double = CaptureConfiguration.defaultPreviewFPS

    @OptionGroup(title: "Output") var output: OutputOptions

    @Option(help: "Also serve the live view (see facewire view --help) on this port: faces boxed and labelled in the browser while JSON Lines still go to stdout.")
    var view: Int?

    @OptionGroup(title: "Live view (with --view)") var http: ViewHTTPOptions

    @OptionGroup(title: "MQTT out (the collector's)") var mqtt: MQTTOptions
    @OptionGroup var detector: DetectorOptions
    @OptionGroup(title: "Face attributes") var attributeModels: AttributeModelOptions
    @OptionGroup(title: "Stream settings") var analysis: AnalysisFlags
    @OptionGroup var log: LogOptions

    func validate() throws {
        guard workers >= 1 else { throw ValidationError("--workers must be at least 1") }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        _ = try FPSOption.parse(fps)
        guard statsInterval > 0, statsInterval.isFinite else { throw ValidationError("--stats-interval must be > 0 seconds") }
        try CollectorCommand.validateMaxPulseTracks(maxPulseTracks)
        guard CaptureConfiguration.previewFPSRange.contains(previewFps) else { throw ValidationError("--preview-fps must be 0...1000 (0: no preview socket)") }
    }

    func run() async throws {
        let logger = try log.makeLogger("facewire.local")
        let source = try self.source ?? DemoFootage.installedPath()
        // Fail before starting any process: a missing file would otherwise surface as a capture node's exit.
        if !source.contains("://"), source != "-", !source.hasPrefix("/dev/video"), !FileManager.default.fileExists(atPath: source) {
            throw ValidationError("--source '\(source)' does not exist")
        }
        _ = try detector.configuration()
        _ = try analysis.options()
        let executable = try selfExecutable()
        let ports = try freeLoopbackPorts(3)
        let (controlPort, publishPort, capturePort) = (ports[0], ports[1], ports[2])
        let control = "tcp://127.0.0.1:\(controlPort)"
        let publish = "tcp://127.0.0.1:\(publishPort)"
        // Children log warnings and worse unless asked for more: stdout stays JSON, stderr stays quiet.
        let childLogLevel = log.logLevel == "info" ? "warning" : log.logLevel

        // A closed standard output (`facewire --role local … | head -3`) is a normal, quiet stop that ends the children
        // too, not a death by SIGPIPE that would leave them running.
        signal(SIGPIPE, SIG_IGN)
        let stop = StopToken()
        // Watch the children: if one that must not die dies, stop with its status.
        let cluster = ChildProcesses(executable: executable, logger: logger) { name, status in
            logger.error("\(name) exited unexpectedly", metadata: ["status": "\(status)"])
            stop.stop()
        }
        defer { cluster.terminateAll() }
        try cluster.start("collector", [
            "--role", "collector", "--bind", control, "--publish", publish, "--max-delay", String(maxDelay),
            "--stats-interval", String(statsInterval), "--max-pulse-tracks", String(maxPulseTracks), "--log-level", childLogLevel,
        ] + (pulseMeshForehead ? ["--pulse-mesh-forehead"] : []) + mqtt.arguments)
        logger.info("collector started", metadata: ["control": "\(control)", "reset": "facewire reset --collector \(control)"])

        let client = TailClient(configuration: .init(publish: publish, streams: [stream]), logger: logger)
        let printer = output.printer
        let startError = Locked<(any Error)?>(nil)
        let ended = Locked(false)
        let (workers, threads) = (self.workers, self.threads)
        let detectorArguments = detector.arguments + attributeModels.arguments
        let captureArguments = [
            "--role", "capture", "--source", source, "--stream", stream, "--bind", "tcp://127.0.0.1:\(capturePort)",
            "--collector", control, "--fps", fps, "--preview-fps", String(previewFps), "--log-level", childLogLevel,
        ] + analysis.arguments + (loop ? ["--loop"] : []) + (frames.map { ["--frames", String($0)] } ?? [])

        let viewNode = view.map { _ in ViewNode(configuration: .init(collector: control), logger: logger) }
        let viewServer = try view.map { port in
            try http.server(port: port, node: viewNode!, logger: logger) { url in
                logger.notice("live view: open \(url) in a browser")
            }
        }
        try await NodeRunner.run("local", logger: logger, server: viewServer, stop: stop) { stop in
            if let viewNode {
                let thread = Thread { try? viewNode.run(stop: stop) }
                thread.name = "view"
                thread.start()
            }
            try client.run(stop: stop, onSubscribed: {
                // The subscription is live: now start the workers and the capture node, so no result is missed.
                do {
                    for index in 0..<workers {
                        try cluster.start("worker-\(index)", [
                            "--role", "worker", "--collector", control, "--threads", String(threads),
                            "--id", "local-w\(index)", "--log-level", childLogLevel,
                        ] + detectorArguments)
                    }
                    try cluster.start("capture", captureArguments, mayExit: true, inheritsInput: source == "-")
                } catch {
                    startError.set(error)
                    stop.stop()
                }
            }) { message in
                let outcome = printer.print(message)
                if outcome == .closed {
                    logger.debug("standard output closed: stopping")
                    ended.set(true)
                    return .stop
                }
                // An epoch ends either because the source did (the capture node then exits) or because a camera
                // was unplugged (the node stays up and starts a new epoch when it is back).
                if outcome == .end, cluster.waitForExit("capture", seconds: 3) {
                    ended.set(true)
                    return .stop
                }
                return .continue
            }
        }
        if let error = startError.value { throw error }
        if !ended.value, let failure = cluster.failure {
            throw ExitCode(failure)
        }
    }

    private func selfExecutable() throws -> String {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        guard FileManager.default.isExecutableFile(atPath: path) else { throw ValidationError("cannot find the facewire executable") }
        return path
    }
}

/// The demo footage the setup script installs (a clip made from scikit-image's astronaut photograph).
enum DemoFootage {
    static var directory: String {
        let environment = ProcessInfo.processInfo.environment
        if let dir = environment["FACEWIRE_DEMO_DIR"], !dir.isEmpty { return dir }
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.cache")
        return cache + "/facewire/demo"
    }

    static func installedPath() throws -> String {
        let path = directory + "/astronaut"
        guard FileManager.default.fileExists(atPath: path) else {
            throw ValidationError("no --source given and no demo footage at \(path): run scripts/setup.sh, or pass --source FILE")
        }
        return path
    }
}
