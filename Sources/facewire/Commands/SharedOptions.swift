import ArgumentParser
import FacewireDetection
import FacewireRuntime
import Foundation
import Logging

/// Logging flags every role has.
struct LogOptions: ParsableArguments {
    @Option(help: "Log level on stderr: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    /// Bootstraps swift-log (stderr) once per process and returns a logger for `label`.
    func makeLogger(_ label: String) throws -> Logger {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("unknown --log-level '\(logLevel)'")
        }
        LoggingBootstrap.once(level: level)
        return Logger(label: label)
    }
}

enum LoggingBootstrap {
    nonisolated(unsafe) private static var done = false
    private static let lock = NSLock()

    static func once(level: Logger.Level) {
        lock.withLock {
            guard !done else { return }
            done = true
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        }
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

    @Option(help: "At most this many faces per frame, best first.")
    var maxFaces: Int = 64

    func configuration() throws -> DetectorConfiguration {
        guard let backend = DetectorConfiguration.Backend(rawValue: detector) else {
            throw ValidationError("unknown --detector '\(detector)': use auto, yunet, centerface or cascade")
        }
        if let model, !FileManager.default.fileExists(atPath: model) {
            throw ValidationError("--model \(model): no such file")
        }
        return DetectorConfiguration(
            backend: backend, modelPath: model, inputWidth: inputWidth, scoreThreshold: scoreThreshold, maxFaces: maxFaces
        )
    }

    /// The same options as command-line arguments, for child processes.
    var arguments: [String] {
        var result = ["--detector", detector, "--max-faces", String(maxFaces)]
        if let model { result += ["--model", model] }
        if let inputWidth { result += ["--input-width", String(inputWidth)] }
        if let scoreThreshold { result += ["--score-threshold", String(scoreThreshold)] }
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
