import ArgumentParser
import FacewireCollector
import FacewireProtocol
import FacewireTail
import FacewireRuntime
import FacewireTracking
import Foundation
import Logging
import ServiceLifecycle

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

    @Flag(help: ArgumentHelp(CollectorCommand.pulseMeshForeheadHelp))
    var pulseMeshForehead = false

    /// `--pulse-mesh-forehead`'s help, shared by the collector and `local`.
    static let pulseMeshForeheadHelp = "Read a moving face's heart rate on the forehead the face mesh outlines, where workers send one "
        + "(they do when a mesh classifier such as smile runs): more rates on moving faces, and more false ones (BENCHMARKS.md, \"Heads that move\")."

    /// What `--max-pulse-tracks` accepts: an estimator holds a window of skin samples, the face's colour and its
    /// regions' (at most 2048 of 64 bytes), so 8,192 of them hold at most 1 GiB.
    static let maxPulseTracksRange = 0...8_192
    /// `--max-pulse-tracks`' help, shared by the collector and `local`.
    static let maxPulseTracksHelp = "Tracks whose heart rate is estimated at once, over all streams, "
        + "\(maxPulseTracksRange.lowerBound)...\(maxPulseTracksRange.upperBound) (each holds a window of skin samples); "
        + "a track beyond it gets no heart rate (counted as pulse_refused_cap); 0 = none."

    @Option(help: "This collector is shard K of N (e.g. 0/4, SPEC.md 19): other nodes list the N shards in --collector, separated by ';', and send each stream to the shard that owns it. Its Welcome says so, and input for a stream another shard owns is counted (shard_foreign_*). With --election, each shard is its own failover group (the key facewire/GROUP/shard-K/leader).")
    var shard: String?

    @OptionGroup(title: "MQTT out") var mqtt: MQTTOptions
    @OptionGroup(title: "Failover (SPEC.md 18)") var failover: FailoverOptions
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
        try failover.validate()
        if let shard {
            do { _ = try ShardIdentity(parsing: shard) } catch { throw ValidationError("--shard: \(error)") }
        }
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
        configuration.pulseMeshForehead = pulseMeshForehead
        configuration.failover = failover.settings(bind: bind)
        configuration.shard = try shard.map(ShardIdentity.init(parsing:))
        let role = configuration.failover == nil ? nil : RoleBox()
        let bridge = try mqtt.bridge(logger: logger)
        let sink: ((StreamMessage) throws -> Void)? =
            file == nil && bridge == nil
            ? nil
            : { message in
                bridge?.offer(message)
                try file?.write(message)
            }
        let node = CollectorNode(configuration: configuration, logger: logger, role: role, sink: sink)
        bridge?.start()
        defer { bridge?.shutdown() }
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
            // A collector without an election is the active one.
            var health = node.liveness.health()
            health.role = role?.healthRole ?? "active"
            return health
        }
        var services: [any Service] = []
        if let role, let settings = configuration.failover {
            services.append(
                try failover.runner(
                    settings: settings, bind: bind, publish: publish, shard: configuration.shard, role: role, counters: node.counters, logger: logger))
        }
        try await NodeRunner.run("collector", logger: logger, server: server, services: services) { stop in try node.run(stop: stop) }
    }
}

/// `--election` and what goes with it: the collector joins a failover group (SPEC.md 18).
struct FailoverOptions: ParsableArguments {
    @Option(help: "Join a failover group elected through etcd at this address (etcd://HOST:PORT, its client URL): one collector of the group is active, the others are hot standbys that take over within about two lease times. Without it the collector works alone.")
    var election: String?

    @Option(help: "The group's name: collectors with the same etcd and group form one failover group (the key facewire/GROUP/leader).")
    var electionGroup: String = "default"

    @Option(help: "Seconds of the election lease (etcd grants at least 1.5 × its --election-timeout): a dead active is replaced after about this long.")
    var electionTTL: Int = 2

    @Option(help: "With --election: where standbys connect to follow the active's state (ROUTER).")
    var replicationBind: String = "tcp://*:\(Wire.defaultCollectorPort + 2)"

    @Option(help: "With --election: the host name or address other nodes reach this collector at (replaces the wildcard in the endpoints written to the leader key). Default: this machine's host name.")
    var advertiseHost: String?

    @Option(help: "With --election: how long (ms) the active waits for a standby to acknowledge a step before publishing without it.")
    var replicationTimeout: Int = 500

    func validate() throws {
        guard let election else { return }
        guard Self.etcdBase(election) != nil else {
            throw ValidationError("--election must be etcd://HOST:PORT, not '\(election)'")
        }
        guard !electionGroup.isEmpty, electionGroup.utf8.count <= 64, electionGroup.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) })
        else { throw ValidationError("--election-group must be 1...64 letters, digits, '-', '_' or '.'") }
        guard (1...60).contains(electionTTL) else { throw ValidationError("--election-ttl must be 1...60 seconds") }
        guard (1...60_000).contains(replicationTimeout) else { throw ValidationError("--replication-timeout must be 1...60000 ms") }
    }

    /// The group's leader key: `facewire/GROUP/leader`, or `facewire/GROUP/shard-K/leader` for shard K (each shard is a
    /// failover group of its own).
    static func leaderKey(group: String, shard: ShardIdentity?) -> String {
        shard.map { "facewire/\(group)/shard-\($0.index)/leader" } ?? "facewire/\(group)/leader"
    }

    /// `http://HOST:PORT` for `etcd://HOST:PORT`.
    static func etcdBase(_ election: String) -> String? {
        guard election.hasPrefix("etcd://") else { return nil }
        let address = election.dropFirst("etcd://".count)
        guard let colon = address.lastIndex(of: ":"), !address[..<colon].isEmpty, let port = Int(address[address.index(after: colon)...]),
              (1...65535).contains(port), !address.contains("/")
        else { return nil }
        return "http://\(address)"
    }

    /// The collector's failover settings, nil without `--election`.
    func settings(bind: String) -> FailoverSettings? {
        guard election != nil else { return nil }
        let host = advertiseHost ?? ProcessInfo.processInfo.hostName
        var settings = FailoverSettings(
            replicationBind: replicationBind, advertiseHost: host,
            nodeID: "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)")
        settings.ackTimeoutMilliseconds = replicationTimeout
        return settings
    }

    /// The election, writing this collector's endpoints into the leader key when it wins.
    func runner(
        settings: FailoverSettings, bind: String, publish: String, shard: ShardIdentity?, role: RoleBox, counters: Counters, logger: Logger
    ) throws -> ElectionRunner {
        guard let election, let base = Self.etcdBase(election) else { throw ValidationError("--election is missing") }
        let value = settings.leaderValue(control: bind, publish: publish, replication: replicationBind)
        var electionSettings = LeaderElection.Settings(value: value.text)
        electionSettings.ttlSeconds = Int64(electionTTL)
        electionSettings.maxValueBytes = LeaderValue.maxBytes
        // A standby without the active's state lets one that has it take over first: two lease times.
        electionSettings.withoutStateDelayNs = UInt64(electionTTL) * 2_000_000_000
        var runner = ElectionRunner(
            gateway: EtcdGateway(base: base, key: Self.leaderKey(group: electionGroup, shard: shard)), settings: electionSettings, counters: counters,
            logger: logger, lacksState: { role.lacksState }
        ) { role.set($0) }
        runner.shards = shard.map { ElectionRunner.ShardCount(group: electionGroup, count: $0.count) }
        return runner
    }
}

/// `--mqtt` and what goes with it: the ordered stream's events, each stream's status and frame summaries published to an
/// MQTT broker (SPEC.md 20).
struct MQTTOptions: ParsableArguments {
    @Option(help: "Publish to this MQTT broker (mqtt://HOST[:PORT], 1883 by default; mqtts:// for TLS, 8883): faceAppeared, faceLeft, trackingReset and streamEnded on PREFIX/STREAM/events (QoS 1; spooled while the broker is away), each stream's status on PREFIX/STREAM/status (retained), a frame summary on PREFIX/STREAM/frames (at most one per --mqtt-summary-interval), and this collector's availability (online; offline as its last will).")
    var mqtt: String?

    @Option(help: "The client id (and availability topic): default facewire-collector-HOSTNAME.")
    var mqttClientId: String?

    @Option(help: "Topic prefix.")
    var mqttPrefix: String = "facewire"

    @Option(help: "User name for the broker.")
    var mqttUsername: String?

    @Option(help: "A file holding the broker password (its first line).")
    var mqttPasswordFile: String?

    @Option(help: "Seconds between two frame summaries of a stream (0: every frame).")
    var mqttSummaryInterval: Double = 1

    @Option(help: "Where events wait for the broker, kept across restarts (default: ~/.cache/facewire/mqtt-spool-CLIENTID.jsonl; 'none': in memory only).")
    var mqttSpool: String?

    @Option(help: "Bytes of events the spool holds at most; further events are dropped and counted (mqtt_events_dropped_spool_full).")
    var mqttSpoolMaxBytes: Int = 16 << 20

    @Option(help: "With mqtts://: the CA certificate file the broker's certificate is checked against (default: the system's).")
    var mqttCaFile: String?

    @Option(help: "With mqtts://: a client certificate (PEM) for brokers that ask for one, with --mqtt-key-file.")
    var mqttCertFile: String?

    @Option(help: "With mqtts://: the client certificate's private key (PEM).")
    var mqttKeyFile: String?

    @Option(help: "Announce each stream to Home Assistant (MQTT discovery under this prefix, usually homeassistant) as a sensor of its face count.")
    var mqttDiscovery: String?

    func validate() throws {
        guard mqttSummaryInterval >= 0, mqttSummaryInterval.isFinite, mqttSummaryInterval <= 86_400 else {
            throw ValidationError("--mqtt-summary-interval must be 0...86400 seconds")
        }
        guard (1024...(1 << 30)).contains(mqttSpoolMaxBytes) else { throw ValidationError("--mqtt-spool-max-bytes must be 1024...2^30") }
        guard !mqttPrefix.isEmpty, mqttPrefix.count <= 64, !mqttPrefix.contains(where: { "+#\0".contains($0) }) else {
            throw ValidationError("--mqtt-prefix must be 1 to 64 characters without +, # or NUL")
        }
        if let id = mqttClientId, id.isEmpty || id.utf8.count > 64 || id.contains(where: { "+#/\0".contains($0) }) {
            throw ValidationError("--mqtt-client-id must be 1 to 64 bytes without +, #, / or NUL")
        }
        if (mqttCertFile == nil) != (mqttKeyFile == nil) { throw ValidationError("--mqtt-cert-file and --mqtt-key-file go together") }
        if mqtt?.hasPrefix("mqtts://") != true, mqttCaFile != nil || mqttCertFile != nil {
            throw ValidationError("--mqtt-ca-file and --mqtt-cert-file are for an mqtts:// broker")
        }
        if let prefix = mqttDiscovery, prefix.isEmpty || prefix.count > 64 || prefix.contains(where: { "+#\0".contains($0) }) {
            throw ValidationError("--mqtt-discovery must be 1 to 64 characters without +, # or NUL")
        }
    }

    /// The arguments that give a child collector the same settings (`local --mqtt`).
    var arguments: [String] {
        guard let mqtt else { return [] }
        var out = ["--mqtt", mqtt, "--mqtt-prefix", mqttPrefix, "--mqtt-summary-interval", String(mqttSummaryInterval),
                   "--mqtt-spool-max-bytes", String(mqttSpoolMaxBytes)]
        if let mqttClientId { out += ["--mqtt-client-id", mqttClientId] }
        if let mqttUsername { out += ["--mqtt-username", mqttUsername] }
        if let mqttPasswordFile { out += ["--mqtt-password-file", mqttPasswordFile] }
        if let mqttSpool { out += ["--mqtt-spool", mqttSpool] }
        if let mqttCaFile { out += ["--mqtt-ca-file", mqttCaFile] }
        if let mqttCertFile { out += ["--mqtt-cert-file", mqttCertFile] }
        if let mqttKeyFile { out += ["--mqtt-key-file", mqttKeyFile] }
        if let mqttDiscovery { out += ["--mqtt-discovery", mqttDiscovery] }
        return out
    }

    func bridge(logger: Logger) throws -> MQTTBridge? {
        guard let mqtt else { return nil }
        let host = ProcessInfo.processInfo.hostName.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }
        var configuration = try MQTTConfiguration(url: mqtt, clientID: mqttClientId ?? "facewire-collector-\(host.prefix(40))")
        configuration.outbox.prefix = mqttPrefix
        configuration.outbox.summaryIntervalSeconds = mqttSummaryInterval
        configuration.outbox.maxSpoolBytes = mqttSpoolMaxBytes
        configuration.outbox.discoveryPrefix = mqttDiscovery
        configuration.outbox.availabilityTopic = configuration.availabilityTopic
        configuration.caFile = mqttCaFile
        configuration.certificateFile = mqttCertFile
        configuration.keyFile = mqttKeyFile
        configuration.username = mqttUsername
        if let file = mqttPasswordFile {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw ValidationError("cannot read --mqtt-password-file \(file)") }
            configuration.password = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        switch mqttSpool {
        case "none": configuration.spoolPath = nil
        case let path?: configuration.spoolPath = path
        case nil:
            let cache = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (NSHomeDirectory() + "/.cache")
            configuration.spoolPath = cache + "/facewire/mqtt-spool-\(configuration.clientID).jsonl"
        }
        do {
            return try MQTTBridge(configuration: configuration, logger: logger)
        } catch where mqttSpool == nil {
            // The default spool cannot be opened (a read-only home, in a container): events wait in memory only.
            logger.warning("MQTT: no spool file (\(error)); events wait in memory only (--mqtt-spool FILE to keep them on disk)")
            configuration.spoolPath = nil
            return try MQTTBridge(configuration: configuration, logger: logger)
        }
    }
}
