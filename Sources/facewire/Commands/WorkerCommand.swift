import ArgumentParser
import FacewireDetection
import FacewireProtocol
import FacewireRuntime
import FacewireWorker
import Foundation
import ZeroMQ
import FacewireTransport

struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Detect faces in frames from every capture node and send the results to the collector.",
        discussion: """
            Stateless: start as many as you like, on any host. Capture endpoints are learned from the collector; \
            --capture adds fixed ones. Each thread has its own sockets and detector.
            """
    )

    @Option(help: CollectorList.help)
    var collector: String

    @Option(help: "Capture endpoints to connect to besides those the collector announces (comma-separated or repeated).")
    var capture: [String] = []

    @Option(help: "Detection threads (default: the cores this process may use).")
    var threads: Int?

    @Option(help: "Worker id in results; must be unique in the cluster (default: host:pid-rrrrrr, six random hex digits).")
    var id: String?

    @Option(help: "CURVE: the public key (.pub) of the capture nodes given with --capture (announced ones bring theirs).")
    var captureKey: String?

    @Option(help: "The most capture nodes announced by the collector held at once; more are refused and counted (captures_refused_cap). An announced node no Welcome has listed for 30 s is forgotten.")
    var maxCaptures: Int = CaptureDirectory.defaultMaxEntries

    @OptionGroup var detector: DetectorOptions
    @OptionGroup(title: "Face attributes") var attributeModels: AttributeModelOptions
    @OptionGroup(title: "Defaults for streams that do not set them") var analysis: AnalysisFlags
    @OptionGroup(title: "Security (CURVE)") var curve: CurveOptions
    @OptionGroup(title: "Metrics") var metrics: MetricsOptions
    @OptionGroup var log: LogOptions

    func validate() throws {
        try CollectorList.validate(collector)
    }

    func run() async throws {
        let logger = try log.makeLogger("facewire.worker")
        metrics.bootstrapIfNeeded()
        var configuration = WorkerConfiguration(
            collector: collector,
            captures: capture.flatMap { $0.split(separator: ",").map(String.init) },
            threads: threads ?? ProcessInfo.processInfo.activeProcessorCount,
            detector: try detector.configuration(),
            workerID: id ?? defaultNodeID(),
            analysis: try analysis.options()
        )
        let detectorNote = try detector.resolved(logging: logger).note
        configuration.attributes = try attributeModels.configuration(runtime: configuration.detector.runtime)
        // The attributes' runtime follows the detector's: the same fallback note is not logged twice.
        if let note = try configuration.attributes.resolve().note, note != detectorNote { logger.notice("\(note)") }
        guard maxCaptures >= 0 else { throw ValidationError("--max-captures must be 0 or more") }
        configuration.maxCaptures = maxCaptures
        configuration.security = try curve.security(needs: .serverKey)
        if let captureKey {
            guard configuration.security != nil else { throw ValidationError("--capture-key needs --curve-secret-key") }
            do {
                configuration.staticCaptureKey = try CurveKeyPair(file: captureKey).publicKey
            } catch {
                throw ValidationError("--capture-key: \(error)")
            }
        }
        let node = WorkerNode(configuration: configuration, logger: logger)
        let server = metrics.server(logger: logger) { node.liveness.health() }
        try await NodeRunner.run("worker", logger: logger, server: server) { stop in try node.run(stop: stop) }
    }
}
