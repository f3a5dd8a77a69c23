import FacewireRuntime
import ArgumentParser
import FacewireCapture
import FacewireDetection
import FacewireProtocol
import FacewireTail
import FacewireWorker
import Foundation

struct DetectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detect",
        abstract: "Analyse a source in this process, on one thread, without a cluster; print JSON Lines.",
        discussion: """
            The same decoding and detection a worker thread does, frame after frame, with the same output format \
            (no tracking IDs). Useful to check a model on a file, and as the baseline the cluster is measured against.
            """
    )

    @Option(help: "A video file, a folder of images, or one image.")
    var source: String

    @Option(help: "Stop after this many frames.")
    var frames: Int?

    @Flag(help: "Start again at the end of the source (use with --frames).")
    var loop: Bool = false

    @OptionGroup var detector: DetectorOptions
    @OptionGroup(title: "Face attributes") var attributeModels: AttributeModelOptions
    @OptionGroup var analysis: AnalysisFlags
    @OptionGroup var log: LogOptions

    func run() throws {
        let logger = try log.makeLogger("facewire.detect")
        setOpenCVThreads(1)
        let options = try analysis.options()
        let resolved = try detector.resolved(logging: logger)
        let analyzer = try FrameAnalyzer(
            detector: try resolved.makeDetector(),
            attributes: try makeAttributeMeasurer(try attributeModels.configuration(runtime: try detector.configuration().runtime)) {
                // The attributes' runtime follows the detector's: the same fallback note is not logged twice.
                if $0 != resolved.note { logger.notice("\($0)") }
            })
        let frameSource = try openFrameSource(source, loop: loop, jpegQuality: 85)
        let printer = LinePrinter(events: false)
        let start = Clock.monotonicNanoseconds()
        var seq: UInt64 = 0
        while frames.map({ seq < $0 }) ?? true, let frame = try frameSource.next() {
            var header = FrameHeader()
            header.version = Wire.version
            header.stream = "detect"
            header.seq = seq
            header.captureTimeUs = Clock.wallMicroseconds()
            header.sentTimeUs = header.captureTimeUs
            header.width = UInt32(frame.width)
            header.height = UInt32(frame.height)
            header.orientation = UInt32(frame.orientation.rawValue)
            var result = WorkerNode.analyse(
                FrameMessage(header: header, jpeg: frame.jpeg), receivedAt: header.captureTimeUs, analyzer: analyzer,
                workerID: "detect", defaults: options
            )
            result.timings.totalMs = Float(Clock.wallMicroseconds() - header.captureTimeUs) / 1000
            printer.print(StreamMessage(stream: "detect", epoch: 0, body: .frame(result)))
            seq += 1
        }
        let seconds = Double(Clock.monotonicNanoseconds() - start) / 1e9
        logger.info("detect finished", metadata: ["frames": "\(seq)", "fps": "\(String(format: "%.1f", Double(seq) / seconds))"])
    }
}
