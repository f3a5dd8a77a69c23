import ArgumentParser
import FacewireCapture
import FacewireImage
import FacewireProtocol
import Foundation

typealias FacewireCaptureConfigurationPacing = CaptureConfiguration.Pacing

struct CaptureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Read frames from a camera, a video file or URL, an image folder or an MJPEG pipe and hand them to workers.",
        discussion: """
            Binds a ROUTER socket that worker threads attach to, and announces it to the collector, which \
            assigns it an idle thread whenever a frame waits (fair shares under overload; --weight). \
            JPEG is sent as it is (a camera's MJPEG, JPEG files, an MJPEG pipe); other sources are encoded once. \
            With live pacing (the default, or a number; cameras and pipes pace themselves), a frame that no idle \
            thread is assigned to in time is dropped here, counted and reported to the collector; with --fps max \
            the source waits for a thread instead. --list-devices shows the cameras and what they offer. \
            A second socket, for live views, gets some of the frames handed to workers while a view watches \
            (--preview-fps; see protocol/SPEC.md 7.5). \
            Give --source and --stream once per camera to run several capture nodes in one process (a host with many \
            cameras): each is a node of its own (socket, epoch, requests), on its own thread, with --bind's port * \
            so that each binds its own; every other option applies to all of them.
            """
    )

    @Option(help: "A camera (/dev/videoN), a video file or URL (rtsp://, http://), a folder of images, one image, or - for an MJPEG stream on standard input (ffmpeg ... -f mjpeg -). Repeat it, each with its --stream, for several capture nodes in this process.")
    var source: [String] = []

    @Flag(help: "List the cameras (/dev/video*) with their formats, sizes and frame rates, and exit.")
    var listDevices: Bool = false

    @Option(help: "Camera frame size, e.g. 1280x720 (default: the largest up to 1280x720 the camera offers).")
    var size: String?

    @Option(help: "Frame rate asked of the camera (default: the driver's).")
    var cameraFps: Int?

    @Option(help: "Send at most this many frames per second (by capture time); the rest are never sent.")
    var maxFps: Double?

    @Option(help: "EXIF orientation 1...8 sent with every frame (default: from each JPEG's EXIF, else 1).")
    var orientation: Int?

    @Option(help: "Seconds between capture statistics lines on the log (captured, sent, dropped at source by reason, encode time, fps); 0 turns them off.")
    var statsInterval: Double = 5

    @Option(help: "Stream id: 1-64 characters of A-Z a-z 0-9 . _ - (default: default). With several --source, one each, in the same order.")
    var stream: [String] = []

    @Option(help: "Endpoint workers connect to.")
    var bind: String = "tcp://*:\(Wire.defaultCapturePort)"

    @Option(help: "Endpoint to announce instead of the bound one (behind NAT, or a DNS name).")
    var advertise: String?

    @Option(help: CollectorList.help)
    var collector: String?

    @Option(help: "Pacing: realtime (the source's own rate), max (as fast as workers take frames), or frames per second.")
    var fps: String = "realtime"

    @Flag(help: "Start again at the end of the source.")
    var loop: Bool = false

    @Option(help: "Stop after this many frames.")
    var frames: Int?

    @Option(name: [.customLong("quality"), .customLong("jpeg-quality")], help: "JPEG quality for frames that must be encoded (YUYV/NV12 cameras, video files, PNG).")
    var jpegQuality: Int = 85

    @Option(help: "Workers drop live frames older than this many ms instead of analysing them (0: never).")
    var maxAge: Int = 2000

    @Option(help: "Worker threads that may attach at once; a Ready from one more is refused (counted as attachments_refused_cap).")
    var maxWorkers: Int = CaptureConfiguration.defaultMaxWorkers

    @Option(help: "This stream's share of the workers under overload, relative to other streams (1/64...64; default 1: equal shares). --max-fps caps a stream's rate instead.")
    var weight: Double = 1

    @Option(help: "Live view: at most this many of the frames handed to workers per second go out on the preview socket, and only while a view (--role view) is subscribed; 0: no preview socket.")
    var previewFps: Double = CaptureConfiguration.defaultPreviewFPS

    @Option(help: "Endpoint live views connect to (default: the --bind host with a port the system picks, e.g. tcp://*:*; the bound one is announced to the collector).")
    var previewBind: String?

    @Option(help: "Preview endpoint to announce instead of the bound one (default: the --advertise host, if given, with the bound port).")
    var previewAdvertise: String?

    @OptionGroup(title: "Stream settings (sent with every frame; unset ones are each worker's)") var analysis: AnalysisFlags
    @OptionGroup(title: "Security (CURVE)") var curve: CurveOptions
    @OptionGroup(title: "Metrics") var metrics: MetricsOptions
    @OptionGroup var log: LogOptions

    func validate() throws {
        if listDevices { return }
        guard !source.isEmpty, source.allSatisfy({ !$0.isEmpty }) else { throw ValidationError("give --source (or --list-devices)") }
        try validateNodes()
        try CollectorList.validate(collector)
        if let size, Self.parseSize(size) == nil { throw ValidationError("--size must be WIDTHxHEIGHT, e.g. 1280x720") }
        if let cameraFps, !(1...1000).contains(cameraFps) { throw ValidationError("--camera-fps must be 1...1000") }
        if let maxFps, !(maxFps > 0 && maxFps.isFinite) { throw ValidationError("--max-fps must be positive") }
        if let orientation, !(1...8).contains(orientation) { throw ValidationError("--orientation must be 1...8 (EXIF)") }
        guard statsInterval >= 0, statsInterval.isFinite else { throw ValidationError("--stats-interval must be >= 0 seconds") }
        guard (1...100).contains(jpegQuality) else { throw ValidationError("--jpeg-quality must be 1...100") }
        if let frames, frames < 1 { throw ValidationError("--frames must be at least 1") }
        guard maxWorkers >= 1 else { throw ValidationError("--max-workers must be at least 1") }
        guard CaptureConfiguration.previewFPSRange.contains(previewFps) else { throw ValidationError("--preview-fps must be 0...1000 (0: no preview socket)") }
        if previewFps == 0, previewBind != nil || previewAdvertise != nil {
            throw ValidationError("--preview-bind and --preview-advertise need a preview socket (--preview-fps > 0)")
        }
        if previewFps > 0, previewBind == nil, CaptureConfiguration.defaultPreviewBind(frameBind: bind) == nil {
            throw ValidationError("give --preview-bind for a --bind other than tcp:// or ipc:// (or --preview-fps 0)")
        }
        _ = try analysis.settings()
    }

    /// The stream of each `--source`, in order.
    var streams: [String] { stream.isEmpty && source.count == 1 ? ["default"] : stream }

    /// Several capture nodes in one process: one --stream per --source, distinct; each binds a port of its own.
    private func validateNodes() throws {
        guard streams.count == source.count else {
            throw ValidationError("give one --stream per --source, in the same order (\(source.count) sources, \(stream.count) streams)")
        }
        for id in streams where !Wire.isValidStreamID(id) {
            throw ValidationError("--stream \(id.prefix(80).debugDescription): 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        guard source.count > 1 else { return }
        guard source.count <= CaptureGroup.maxNodes else { throw ValidationError("at most \(CaptureGroup.maxNodes) --source in one process") }
        guard Set(streams).count == streams.count else { throw ValidationError("each --stream must be different") }
        guard source.filter({ $0 == "-" }).count <= 1 else { throw ValidationError("only one --source can read standard input (-)") }
        guard bind.hasSuffix(":*") else {
            throw ValidationError("several --source: each node binds its own port; use --bind with port *, e.g. tcp://*:* or tcp://10.0.0.21:*")
        }
        guard advertise == nil, previewAdvertise == nil, previewBind.map({ $0.hasSuffix(":*") }) ?? true else {
            throw ValidationError("several --source: --advertise, --preview-advertise and a --preview-bind with a fixed port name one node's endpoint; leave them out")
        }
    }

    static func parseSize(_ text: String) -> (width: Int, height: Int)? {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), (1...16384).contains(width),
            (1...16384).contains(height)
        else { return nil }
        return (width, height)
    }

    func run() async throws {
        if listDevices {
            let backend = try V4L2Backends.current()
            print(V4L2DeviceList.render(V4L2DeviceList.devices(backend: backend)), terminator: "")
            return
        }
        let logger = try log.makeLogger("facewire.capture")
        metrics.bootstrapIfNeeded()
        guard weight.isFinite, (1.0 / 64...64).contains(weight) else { throw ValidationError("--weight must be in 1/64...64, not \(weight)") }
        let configurations = try zip(source, streams).map { try configuration(source: $0, stream: $1) }
        if configurations.count == 1 {
            let node = try CaptureNode(configuration: configurations[0], logger: logger)
            let server = metrics.server(logger: logger) { node.liveness.health() }
            try await NodeRunner.run("capture", logger: logger, server: server) { stop in try node.run(stop: stop) }
        } else {
            let group = try CaptureGroup(configurations: configurations, logger: logger)
            let server = metrics.server(logger: logger) { group.health() }
            logger.info("capture nodes in one process", metadata: ["nodes": "\(configurations.count)"])
            try await NodeRunner.run("capture", logger: logger, server: server) { stop in try group.run(stop: stop) }
        }
    }

    /// One node's configuration: its source and stream, every other option as given.
    private func configuration(source: String, stream: String) throws -> CaptureConfiguration {
        var configuration = CaptureConfiguration(
            source: source, stream: stream, bind: bind, advertise: advertise, collector: collector,
            pacing: try FPSOption.parse(fps), loop: loop, maxFrames: frames, jpegQuality: jpegQuality,
            maxAgeMilliseconds: maxAge, settings: try analysis.settings()
        )
        configuration.camera = V4L2Camera.Settings(size: size.flatMap(Self.parseSize), fps: cameraFps, jpegQuality: jpegQuality)
        configuration.maxFPS = maxFps
        configuration.weight = weight
        configuration.orientation = orientation.map { Orientation(rawValue: $0) }
        configuration.statisticsIntervalSeconds = statsInterval
        configuration.maxWorkers = maxWorkers
        configuration.previewFPS = previewFps
        configuration.previewBind = previewBind
        configuration.previewAdvertise = previewAdvertise
        configuration.security = try curve.security(needs: collector == nil ? .allowList : .both)
        return configuration
    }
}
