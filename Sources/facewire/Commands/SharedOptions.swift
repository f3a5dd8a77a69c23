import ArgumentParser
import FacewireDetection
import FacewireProtocol
import FacewireRuntime
import Foundation
import Logging

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

/// `--metrics-port`: Prometheus text on `/metrics` and a health check on `/healthz`.
struct MetricsOptions: ParsableArguments {
    @Option(help: "Serve Prometheus metrics at http://HOST:PORT/metrics and a health check at /healthz (default: off).")
    var metricsPort: Int?

    @Option(help: "Address the metrics server listens on.")
    var metricsHost: String = "0.0.0.0"

    func validate() throws {
        if let metricsPort, !(0...65535).contains(metricsPort) { throw ValidationError("--metrics-port must be 0...65535") }
    }

    /// Bootstraps metrics and starts the server when `--metrics-port` was given. Call before creating the node, so
    /// that its metrics are real ones.
    func start(logger: Logger, stop: StopToken, health: @escaping @Sendable () -> MetricsServer.Health) throws -> MetricsServer? {
        guard let metricsPort else { return nil }
        let server = try Observability.serve(host: metricsHost, port: metricsPort, stop: stop, health: health)
        logger.info("metrics serving", metadata: ["metrics": "http://\(metricsHost):\(server.port)/metrics", "health": "/healthz"])
        return server
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

    @Option(help: "Width the detector runs at (default: the backend's measured best).")
    var inputWidth: Int?

    @Option(help: "Minimum detector confidence, 0...1 (default: the backend's).")
    var scoreThreshold: Float?

    @Option(help: "Refine the landmarks (and faceAngle) of tilted faces on an upright crop: on or off. Default on.")
    var refineLandmarks: String = "on"

    func configuration() throws -> DetectorConfiguration {
        guard let backend = DetectorConfiguration.Backend(rawValue: detector) else {
            throw ValidationError("unknown --detector '\(detector)': use auto, yunet, centerface or cascade")
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
        return DetectorConfiguration(
            backend: backend, modelPath: model, inputWidth: inputWidth, scoreThreshold: scoreThreshold,
            refineLandmarks: refine
        )
    }

    /// The same options as command-line arguments, for child processes.
    var arguments: [String] {
        var result = ["--detector", detector]
        if let model { result += ["--model", model] }
        if let inputWidth { result += ["--input-width", String(inputWidth)] }
        if let scoreThreshold { result += ["--score-threshold", String(scoreThreshold)] }
        if refineLandmarks != "on" { result += ["--refine-landmarks", refineLandmarks] }
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

    @Option(help: "Classifiers run on each face: smile, eyes, all or none (comma-separated). Default all.")
    var classifiers: String?

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
        guard accuracy != nil || minFace != nil || maxFaces != nil || faceMode != nil || classifiers != nil else {
            return nil
        }
        let options = try options()
        var settings = DetectionSettings()
        if accuracy != nil { settings.accuracy = options.accuracy == .high ? .high : .low }
        if faceMode != nil { settings.faceMode = options.faceMode == .large ? .large : .small }
        if minFace != nil { settings.minFace = UInt32(options.minFace) }
        if maxFaces != nil { settings.maxFaces = UInt32(options.maxFaces) }
        if classifiers != nil { settings.classifiers = options.classifiers.rawValue }
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
        return result
    }
}

/// Runs a node's blocking loop on the main thread, stopping it on SIGINT/SIGTERM.
enum NodeRunner {
    static func run(logger: Logger, _ body: (StopToken) throws -> Void) throws {
        let stop = StopToken()
        let sources = [SIGINT, SIGTERM].map { signalNumber -> DispatchSourceSignal in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                logger.info("signal received, stopping", metadata: ["signal": "\(signalNumber)"])
                stop.stop()
            }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        try body(stop)
    }
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
