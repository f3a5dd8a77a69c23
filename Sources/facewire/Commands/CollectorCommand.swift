import ArgumentParser
import FacewireCollector
import FacewireProtocol
import FacewireTail
import FacewireTracking

struct CollectorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collector",
        abstract: "Merge results per stream in frame order, assign tracking IDs and publish the stream.",
        discussion: """
            The one address other nodes need. A frame that has not come back --max-delay ms after a later frame \
            of its stream is emitted as dropped; a result that arrives after that is discarded and counted.
            """
    )

    @Option(help: "Control endpoint (hellos and results).")
    var bind: String = "tcp://*:\(Wire.defaultCollectorPort)"

    @Option(help: "Results stream endpoint (PUB) for tails and other subscribers.")
    var publish: String = "tcp://*:\(Wire.defaultPublishPort)"

    @Option(help: "Milliseconds to wait for a missing frame once a later one is known.")
    var maxDelay: Int = 1000

    @Option(help: "Results held per stream while an earlier frame is missing (and, separately, skip runs stored); dropped runs up to this long are published frame by frame, longer ones as one line with runLength.")
    var maxPending: Int = 256

    @Option(help: "Seconds a face that is no longer seen keeps its tracking ID (capture time).")
    var trackMaxAge: Double = 1.0

    @Option(help: "Frames a face must be seen in before it gets a tracking ID and a faceAppeared event.")
    var trackMinHits: Int = 1

    @Option(help: "Tracks kept per stream at most; beyond it the tracks seen longest ago end (faceLeft) at once.")
    var maxTracks: Int = 256

    @Option(help: "Also write the ordered stream (frames, events, stream ends) to this JSON Lines file, in order; nothing is buffered, and rotation and shutdown fsync it.")
    var output: String?

    @Option(help: "With --output: rotate the file to FILE-000001.jsonl, FILE-000002.jsonl, … when it would pass this many bytes.")
    var outputMaxBytes: Int = 256 << 20

    @Option(help: "Seconds between per-stream statistics (frames, processed, drops by reason, late, fps, latency p50/p99), on stderr and in the stream; 0 turns them off.")
    var statsInterval: Double = 5

    @Option(help: "Bytes (estimated) of buffered results over all streams at most; a result beyond it is refused (results_refused_pending_bytes) and its frame drops as timeout.")
    var maxPendingBytes: Int = 256 << 20

    @Option(help: "Open (stream, epoch) pairs at most; a new stream beyond it is refused (counted as streams_refused_cap).")
    var maxStreams: Int = 1024

    @Option(help: "Capture nodes announced at most; a new one beyond it is refused (captures_refused_cap).")
    var maxCaptures: Int = 1024

    @Option(help: "Worker identities remembered at most; beyond it workers are still answered but not remembered (workers_refused_cap).")
    var maxWorkers: Int = 4096

    @Option(help: "Distinct stream labels on facewire_stream_frames_total; further streams are counted as stream=\"_other\".")
    var maxMetricStreams: Int = 64

    @Option(help: "Seconds without any input (hello, result, skip) after which an open stream is closed: its gaps drop as timeout and it ends; 0 = never.")
    var streamIdleTimeout: Double = 60

    @Option(help: ArgumentHelp(CollectorCommand.maxPulseTracksHelp))
    var maxPulseTracks: Int = 256

    /// What `--max-pulse-tracks` accepts: an estimator holds a window of skin samples, the face's colour and its
    /// regions' (at most 2048 of 64 bytes), so 8,192 of them hold at most 1 GiB.
    static let maxPulseTracksRange = 0...8_192
    /// `--max-pulse-tracks`' help, shared by the collector and `local`.
    static let maxPulseTracksHelp = "Tracks whose heart rate is estimated at once, over all streams, "
        + "\(maxPulseTracksRange.lowerBound)...\(maxPulseTracksRange.upperBound) (each holds a window of skin samples); "
        + "a track beyond it gets no heart rate (counted as pulse_refused_cap); 0 = none."

    @OptionGroup(title: "Security (CURVE)") var curve: CurveOptions
    @OptionGroup(title: "Metrics") var metrics: MetricsOptions
    @OptionGroup var log: LogOptions

    func validate() throws {
        guard maxDelay >= 0 else { throw ValidationError("--max-delay must not be negative") }
        guard maxPending >= 1 else { throw ValidationError("--max-pending must be at least 1") }
        guard trackMaxAge >= 0, trackMaxAge.isFinite else { throw ValidationError("--track-max-age must be >= 0 seconds") }
        guard (1...1000).contains(trackMinHits) else { throw ValidationError("--track-min-hits must be in 1...1000") }
        guard maxTracks >= 1 else { throw ValidationError("--max-tracks must be at least 1") }
        guard outputMaxBytes > 0 else { throw ValidationError("--output-max-bytes must be positive") }
        guard statsInterval >= 0, statsInterval.isFinite else { throw ValidationError("--stats-interval must be >= 0 seconds") }
        guard maxPendingBytes >= 0 else { throw ValidationError("--max-pending-bytes must not be negative") }
        guard maxStreams >= 1 else { throw ValidationError("--max-streams must be at least 1") }
        guard maxCaptures >= 0, maxWorkers >= 0, maxMetricStreams >= 0 else {
            throw ValidationError("--max-captures, --max-workers and --max-metric-streams must not be negative")
        }
        guard streamIdleTimeout >= 0, streamIdleTimeout.isFinite else { throw ValidationError("--stream-idle-timeout must be >= 0 seconds") }
        try Self.validateMaxPulseTracks(maxPulseTracks)
    }

    /// Refuses a `--max-pulse-tracks` outside ``maxPulseTracksRange`` (the collector and `local` roles).
    static func validateMaxPulseTracks(_ value: Int) throws {
        guard maxPulseTracksRange.contains(value) else {
            throw ValidationError("--max-pulse-tracks must be \(maxPulseTracksRange.lowerBound)...\(maxPulseTracksRange.upperBound)")
        }
    }

    func run() async throws {
        let logger = try log.makeLogger("facewire.collector")
        metrics.bootstrapIfNeeded()
        let file = try output.map { try JSONLinesFile(path: $0, maxBytes: outputMaxBytes) }
        var configuration = CollectorConfiguration(
            bind: bind, publish: publish, maxDelayMilliseconds: maxDelay, maxPending: maxPending,
            tracking: FaceTracker.Configuration(maxAge: trackMaxAge, minHits: trackMinHits, maxTracks: maxTracks),
            statisticsIntervalSeconds: statsInterval, security: try curve.security(needs: .allowList))
        configuration.maxStreams = maxStreams
        configuration.maxPendingBytes = maxPendingBytes
        configuration.maxCaptures = maxCaptures
        configuration.maxWorkers = maxWorkers
        configuration.maxMetricStreams = maxMetricStreams
        configuration.streamIdleTimeoutSeconds = streamIdleTimeout
        configuration.maxPulseTracks = maxPulseTracks
        let node = CollectorNode(
            configuration: configuration,
            logger: logger,
            sink: file.map { file in { try file.write($0) } }
        )
        defer {
            if let file {
                do {
                    try file.close()
                    logger.info("output closed", metadata: ["file": "\(file.path)", "lines": "\(file.lines)", "rotations": "\(file.rotations)"])
                } catch {
                    logger.error("\(error)")
                }
            }
        }
        let server = metrics.server(logger: logger) {
            // A collector without an election is the active one (issue 29: with --election, "standby" too).
            var health = node.liveness.health()
            health.role = "active"
            return health
        }
        try await NodeRunner.run("collector", logger: logger, server: server) { stop in try node.run(stop: stop) }
    }
}
