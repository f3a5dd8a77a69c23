import ArgumentParser
import FacewireCapture
import FacewireProtocol
import Foundation

typealias FacewireCaptureConfigurationPacing = CaptureConfiguration.Pacing

struct CaptureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Read frames from a video file, an image folder or an image and hand them to workers.",
        discussion: """
            Binds a ROUTER socket that idle workers ask for frames, and announces it to the collector. \
            JPEG files are sent as they are; other sources are encoded once. With live pacing (the default, \
            or a number), a frame that no idle worker is waiting for is dropped here, counted and reported to \
            the collector; with --fps max the source waits for a worker instead.
            """
    )

    @Option(help: "A video file, a folder of images, or one image.")
    var source: String

    @Option(help: "Stream id: 1-64 characters of A-Z a-z 0-9 . _ -")
    var stream: String = "default"

    @Option(help: "Endpoint workers connect to.")
    var bind: String = "tcp://*:\(Wire.defaultCapturePort)"

    @Option(help: "Endpoint to announce instead of the bound one (behind NAT, or a DNS name).")
    var advertise: String?

    @Option(help: "The collector's endpoint, e.g. tcp://collector-host:\(Wire.defaultCollectorPort).")
    var collector: String?

    @Option(help: "Pacing: realtime (the source's own rate), max (as fast as workers take frames), or frames per second.")
    var fps: String = "realtime"

    @Flag(help: "Start again at the end of the source.")
    var loop: Bool = false

    @Option(help: "Stop after this many frames.")
    var frames: Int?

    @Option(help: "JPEG quality for frames that must be encoded.")
    var jpegQuality: Int = 85

    @Option(help: "Workers drop live frames older than this many ms instead of analysing them (0: never).")
    var maxAge: Int = 2000

    @OptionGroup(title: "Stream settings (sent with every frame; unset ones are each worker's)") var analysis: AnalysisFlags
    @OptionGroup var log: LogOptions

    func validate() throws {
        guard Wire.isValidStreamID(stream) else { throw ValidationError("--stream: 1-64 characters of A-Z a-z 0-9 . _ -") }
        guard (1...100).contains(jpegQuality) else { throw ValidationError("--jpeg-quality must be 1...100") }
        if let frames, frames < 1 { throw ValidationError("--frames must be at least 1") }
        _ = try analysis.settings()
    }

    func run() throws {
        let logger = try log.makeLogger("facewire.capture")
        let configuration = CaptureConfiguration(
            source: source, stream: stream, bind: bind, advertise: advertise, collector: collector,
            pacing: try FPSOption.parse(fps), loop: loop, maxFrames: frames, jpegQuality: jpegQuality,
            maxAgeMilliseconds: maxAge, settings: try analysis.settings()
        )
        let node = try CaptureNode(configuration: configuration, logger: logger)
        try NodeRunner.run(logger: logger) { stop in try node.run(stop: stop) }
    }
}
