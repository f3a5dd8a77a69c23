import ArgumentParser
import FacewireHTTP
import FacewireDetection
import FacewireOpenCV
import FacewireProtocol
import FacewireRuntime
import Foundation
import Logging
import ServiceLifecycle

/// Logging flags every role has.
struct LogOptions: ParsableArguments {
    @Option(help: "Log level on stderr: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Option(help: "Log format on stderr: text (for people) or json (one object per line, for log shippers).")
    var logFormat: String = "text"

    /// Bootstraps swift-log (stderr) once per process and returns a logger for `label`.
    func makeLogger(_ label: String) throws -> Logger {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("unknown --log-level '\(logLevel)'")
        }
        guard ["text", "json"].contains(logFormat) else { throw ValidationError("--log-format must be text or json") }
        LoggingBootstrap.once(level: level, json: logFormat == "json")
        return Logger(label: label)
    }
}

enum LoggingBootstrap {
    nonisolated(unsafe) private static var done = false
    private static let lock = NSLock()

    static func once(level: Logger.Level, json: Bool = false) {
        lock.withLock {
            guard !done else { return }
            done = true
            LoggingSystem.bootstrap { label in
                if json {
                    var handler = JSONLogHandler(label: label)
                    handler.logLevel = level
                    return handler
                }
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        }
    }
}

/// `--metrics-port`: Prometheus text on `/metrics` and a health check on `/healthz`, served by the node's
/// ``HTTPServer`` (Hummingbird).
struct MetricsOptions: ParsableArguments {
    @Option(help: "Serve Prometheus metrics at http://HOST:PORT/metrics and a health check at /healthz (default: off).")
    var metricsPort: Int?

    @Option(help: "Address the metrics server listens on.")
    var metricsHost: String = "0.0.0.0"

    @Option(help: "Seconds an HTTP connection may go without a complete request part (request line and headers), or with a response the client does not take, before it is closed: the read, idle and write timeout.")
    var metricsTimeout: Double = 5

    @Option(help: "HTTP connections open at once; more wait in the listen backlog until one closes (counted as facewire_http_connections_capped_total).")
    var metricsMaxConnections: Int = HTTPServer.defaultMaxConnections

    func validate() throws {
        if let metricsPort, !(0...65535).contains(metricsPort) { throw ValidationError("--metrics-port must be 0...65535") }
        guard metricsTimeout > 0, metricsTimeout <= 3600 else {
            throw ValidationError("--metrics-timeout must be in (0, 3600] seconds")
        }
        guard (1...65536).contains(metricsMaxConnections) else { throw ValidationError("--metrics-max-connections must be 1...65536") }
    }

    /// The HTTP server serving `/metrics` and `/healthz` when `--metrics-port` was given (call ``bootstrapIfNeeded()``
    /// before creating the node, so that its metrics are real ones).
    func server(logger: Logger, health: @escaping @Sendable () -> Health) -> HTTPServer? {
        guard let metricsPort else { return nil }
        Observability.bootstrap()
        let host = metricsHost
        let configuration = HTTPServer.Configuration(
            host: host, port: metricsPort, timeout: .seconds(metricsTimeout),
            maxConnections: metricsMaxConnections)
        return HTTPServer(configuration: configuration, logger: logger, onRunning: { port in
            logger.info("metrics serving", metadata: ["metrics": "http://\(host):\(port)/metrics", "health": "/healthz"])
        }) { routes in
            HTTPServer.mountObservability(on: routes, health: health)
        }
    }

    /// Bootstraps metrics when they will be served (call before creating the node).
    func bootstrapIfNeeded() {
        if metricsPort != nil { Observability.bootstrap() }
    }
}

/// Which detector a worker (or local cluster) runs.
struct DetectorOptions: ParsableArguments {
    @Option(help: "Detector backend: auto, yunet, centerface, cascade. auto picks from --model, else the best model installed.")
    var detector: String = "auto"

    @Option(help: "Path of an ONNX face model (YuNet 2022mar or CenterFace). Default: the first found in $FACEWIRE_MODEL_DIR, ~/.cache/facewire/models.")
    var model: String?

    @Option(help: "Width the detector runs at (default: the backend's measured best, 320, raised to a quarter of frames wider than 1280, at most 640).")
    var inputWidth: Int?

    @Option(help: "Minimum detector confidence, 0...1 (default: the backend's).")
    var scoreThreshold: Float?

    @Option(help: "Refine the landmarks (and faceAngle) of tilted faces on an upright crop: on or off. Default on.")
    var refineLandmarks: String = "on"

    @Option(help: "With --detector synthetic (a test tool for scale tests, not a detector): milliseconds each frame takes, waiting without using the CPU. Default 50.")
    var syntheticMs: Int = 50

    @Option(help: "What runs the detector's network: auto (OpenVINO where installed: $FACEWIRE_OPENVINO, ~/.cache/facewire/openvino/libs; else OpenCV), openvino or opencv.")
    var runtime: String = "auto"

    func configuration() throws -> DetectorConfiguration {
        guard let backend = DetectorConfiguration.Backend(rawValue: detector) else {
            throw ValidationError("unknown --detector '\(detector)': use auto, yunet, centerface or cascade (or the test tools synthetic and noop)")
        }
        if let model, !FileManager.default.fileExists(atPath: model) {
            throw ValidationError("--model \(model): no such file")
        }
        let refine: Bool
        switch refineLandmarks.lowercased() {
        case "on", "true", "1", "yes": refine = true
        case "off", "false", "0", "no": refine = false
        default: throw ValidationError("--refine-landmarks must be on or off, not '\(refineLandmarks)'")
        }
        guard (0...SyntheticDetector.maxMilliseconds).contains(syntheticMs) else {
            throw ValidationError("--synthetic-ms must be in 0...\(SyntheticDetector.maxMilliseconds), not \(syntheticMs)")
        }
        var configuration = DetectorConfiguration(
            backend: backend, modelPath: model, inputWidth: inputWidth, scoreThreshold: scoreThreshold,
            refineLandmarks: refine
        )
        configuration.syntheticMilliseconds = syntheticMs
        switch runtime.lowercased() {
        case "auto": configuration.runtime = nil
        case let name:
            guard let chosen = InferenceRuntime(rawValue: name) else {
                throw ValidationError("--runtime must be auto, openvino or opencv, not '\(runtime)'")
            }
            configuration.runtime = chosen
        }
        return configuration
    }

    /// The same options as command-line arguments, for child processes.
    /// Resolves the configuration once and logs the choice: backend, model, runtime (and OpenVINO's version), and
    /// the note when the choice differs from what was asked (a fallback).
    func resolved(logging logger: Logger) throws -> ResolvedDetector {
        let resolved = try configuration().resolve()
        logger.info("detector", metadata: [
            "backend": "\(resolved.backend.rawValue)", "model": "\(resolved.modelPath ?? "-")",
            "runtime": "\(resolved.runtime == .openvino ? "openvino \(OpenVINOLibrary.version)" : "opencv")",
        ])
        if let note = resolved.note { logger.notice("\(note)") }
        return resolved
    }

    var arguments: [String] {
        var result = ["--detector", detector]
        if let model { result += ["--model", model] }
        if let inputWidth { result += ["--input-width", String(inputWidth)] }
        if let scoreThreshold { result += ["--score-threshold", String(scoreThreshold)] }
        if refineLandmarks != "on" { result += ["--refine-landmarks", refineLandmarks] }
        if detector == "synthetic" { result += ["--synthetic-ms", String(syntheticMs)] }
        if runtime != "auto" { result += ["--runtime", runtime] }
        return result
    }
}

/// The per-stream analysis settings (CIDetector's and Affdex's options). On a capture node they become the
/// stream's settings in every frame header; on a worker they are the defaults for frames that leave them unset.
struct AnalysisFlags: ParsableArguments {
    @Option(help: "Accuracy: low (fast) or high (detector at twice the width: smaller faces, 2-3x slower). Default low.")
    var accuracy: String?

    @Option(help: "Smallest face height reported, in pixels of the upright frame. Default 0.")
    var minFace: Int?

    @Option(help: "At most this many faces per frame, most confident first (1...\(AnalysisOptions.maxFacesLimit)). Default 64.")
    var maxFaces: Int?

    @Option(help: "Face mode: small (any size) or large (only faces >= 1/8 of the frame; detector at half width). Default small.")
    var faceMode: String?

    @Option(help: "Classifiers run on each face: smile, eyes, pose, quality, pulse (skin colour for a heart-rate estimate), the expressions brow-raise, brow-furrow, mouth-open, eye-widen, lip-pucker, lip-corner-depressor (or all six: expressions), all or none (comma-separated). Default smile,eyes,pose,quality: pulse is opt-in, as a heart rate is health data.")
    var classifiers: String?

    @Option(help: "Landmark list per face: none, 5 (the detector's points) or mesh (468 points, ~3.7 KB per face). Default 5.")
    var landmarks: String?

    /// `defaults` with every given flag applied.
    func options(defaults: AnalysisOptions = AnalysisOptions()) throws -> AnalysisOptions {
        var options = defaults
        if let accuracy {
            guard let value = AnalysisOptions.Accuracy(rawValue: accuracy.lowercased()) else {
                throw ValidationError("--accuracy must be low or high, not '\(accuracy)'")
            }
            options.accuracy = value
        }
        if let faceMode {
            guard let value = AnalysisOptions.FaceMode(rawValue: faceMode.lowercased()) else {
                throw ValidationError("--face-mode must be small or large, not '\(faceMode)'")
            }
            options.faceMode = value
        }
        if let minFace { options.minFace = minFace }
        if let maxFaces { options.maxFaces = maxFaces }
        if let landmarks {
            guard let value = AnalysisOptions.Landmarks(parsing: landmarks) else {
                throw ValidationError("--landmarks must be none, 5 or mesh, not '\(landmarks)'")
            }
            options.landmarks = value
        }
        if let classifiers {
            do {
                options.classifiers = try .parse(classifiers)
            } catch {
                throw ValidationError("--classifiers: \(error)")
            }
        }
        do {
            try options.validate()
        } catch {
            throw ValidationError("\(error)")
        }
        return options
    }

    /// The given flags as a stream's settings (unset where no flag was given), or `nil` when none was given.
    func settings() throws -> DetectionSettings? {
        guard accuracy != nil || minFace != nil || maxFaces != nil || faceMode != nil || classifiers != nil
            || landmarks != nil
        else {
            return nil
        }
        let options = try options()
        var settings = DetectionSettings()
        if accuracy != nil { settings.accuracy = options.accuracy == .high ? .high : .low }
        if faceMode != nil { settings.faceMode = options.faceMode == .large ? .large : .small }
        if minFace != nil { settings.minFace = UInt32(options.minFace) }
        if maxFaces != nil { settings.maxFaces = UInt32(options.maxFaces) }
        if classifiers != nil { settings.classifiers = options.classifiers.rawValue }
        if landmarks != nil {
            switch options.landmarks {
            case .none: settings.landmarks = .none
            case .five: settings.landmarks = .five
            case .mesh: settings.landmarks = .mesh
            }
        }
        return settings
    }

    /// The given flags as command-line arguments, for child processes.
    var arguments: [String] {
        var result: [String] = []
        if let accuracy { result += ["--accuracy", accuracy] }
        if let minFace { result += ["--min-face", String(minFace)] }
        if let maxFaces { result += ["--max-faces", String(maxFaces)] }
        if let faceMode { result += ["--face-mode", faceMode] }
        if let classifiers { result += ["--classifiers", classifiers] }
        if let landmarks { result += ["--landmarks", landmarks] }
        return result
    }
}

/// Runs a node: its blocking loop on a thread of its own (a ``BlockingService``) and, with `--metrics-port`, its HTTP
/// server, as services of one `ServiceGroup` that shuts down gracefully on SIGTERM and SIGINT. Graceful shutdown sets
/// the loop's ``StopToken`` (the node drains as it always has) and then stops the HTTP server; a part that ends by
/// itself (a source that ended) shuts the others down the same way; a part that fails is logged with its name, the
/// others are shut down and the error is rethrown (a non-zero exit).
enum NodeRunner {
    static func run(
        _ name: String, logger: Logger, server: HTTPServer? = nil, services extra: [any Service] = [], stop: StopToken = StopToken(),
        _ body: @escaping @Sendable (StopToken) throws -> Void
    ) async throws {
        // Shut down in reverse order: the others first (a collector's election stands it down and revokes its lease, so
        // that a standby takes over at once), then the loop (it drains while /healthz still answers), then the server.
        var services: [any Service] = []
        if let server { services.append(LoggedService(server, name: "metrics server (\(server.address))", logger: logger)) }
        services.append(BlockingService(name, stop: stop, logger: logger, body: body))
        services += extra.map { LoggedService($0, name: "\(type(of: $0))", logger: logger) }
        let group = ServiceGroup(configuration: .init(
            services: services.map {
                .init(service: $0, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)
            },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        try await group.run()
    }
}

/// A service whose failure is logged with a name saying which part of the node it was.
struct LoggedService: Service, CustomStringConvertible {
    let service: any Service
    let name: String
    let logger: Logger

    init(_ service: any Service, name: String, logger: Logger) {
        self.service = service
        self.name = name
        self.logger = logger
    }

    func run() async throws {
        do {
            try await service.run()
        } catch {
            logger.error("\(name) failed, stopping the node: \(error)", metadata: ["part": "\(name)"])
            throw error
        }
    }

    var description: String { name }
}

/// Parses `--fps`: "realtime" (default), "max", or a number.
enum FPSOption {
    static func parse(_ value: String) throws -> FacewireCaptureConfigurationPacing {
        switch value.lowercased() {
        case "realtime", "real-time", "source": return .realTime
        case "max", "unlimited": return .asFastAsPossible
        default:
            guard let rate = Double(value), rate > 0, rate.isFinite else {
                throw ValidationError("--fps must be 'realtime', 'max' or a positive number, not '\(value)'")
            }
            return .fixed(rate)
        }
    }
}

/// How a worker measures face attributes (worker, local, detect and eval).
struct AttributeModelOptions: ParsableArguments {
    @Option(help: "What face attributes are measured on: auto (the face mesh when installed, else the 5 landmarks), mesh or landmarks.")
    var attributeMethod: String = "auto"

    @Option(help: "What reads a smile on the mesh: mesh (mouth geometry, the default) or fer (opt-in: a CNN trained on FER2013, whose terms for commercial use are unclear; install it with scripts/setup.sh --with-fer).")
    var smileModel: String = "mesh"

    /// The configuration, its networks run by `runtime` (the detector's `--runtime`; `nil`: auto).
    func configuration(runtime: InferenceRuntime?) throws -> AttributeConfiguration {
        guard let method = AttributeConfiguration.Method(rawValue: attributeMethod.lowercased()) else {
            throw ValidationError("--attribute-method must be auto, mesh or landmarks, not '\(attributeMethod)'")
        }
        guard let smile = AttributeConfiguration.SmileModel(rawValue: smileModel.lowercased()) else {
            throw ValidationError("--smile-model must be mesh or fer, not '\(smileModel)'")
        }
        var configuration = AttributeConfiguration(method: method, smileModel: smile)
        configuration.runtime = runtime
        return configuration
    }

    /// The flags as command-line arguments, for child processes.
    var arguments: [String] { ["--attribute-method", attributeMethod, "--smile-model", smileModel] }
}

/// `--collector`'s help and check, the same for every role that talks to collectors.
enum CollectorList {
    static let help = ArgumentHelp(
        "The collector's control endpoint, e.g. tcp://collector-host:\(Wire.defaultCollectorPort). A failover group: its "
            + "endpoints separated by ',' (SPEC.md 18). Shards: the groups separated by ';', the same list in the same order "
            + "on every node (SPEC.md 19), e.g. 'tcp://a:5556,tcp://b:5556;tcp://c:5556'.")

    /// Refuses a list without an endpoint, with more than ``ShardMap/maxShards`` shards, or naming an endpoint twice.
    static func validate(_ value: String?) throws {
        guard let value else { return }
        do { _ = try ShardMap(parsing: value) } catch { throw ValidationError("--collector: \(error)") }
    }
}
