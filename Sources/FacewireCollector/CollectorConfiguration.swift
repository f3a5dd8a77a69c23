import FacewireCollectorCore
import FacewireProtocol
import ZeroMQ
import FacewireTracking

/// Where the collector listens and how long it waits for late frames.
public struct CollectorConfiguration: Sendable {
    /// Control and intake endpoint (ROUTER): hellos, results, skips and stream ends arrive here.
    /// This is the one address users give to every other node.
    public var bind: String
    /// The ordered results stream (PUB).
    public var publish: String
    /// How long a missing frame is waited for once a later frame of its stream is known, in milliseconds.
    public var maxDelayMilliseconds: Int
    /// Results held per stream while an earlier frame is missing; beyond it the missing frame is dropped.
    public var maxPending: Int
    /// Seconds without a hello after which a capture node is no longer announced to workers.
    public var captureExpirySeconds: Double
    /// How faces are tracked in each stream.
    public var tracking: FaceTracker.Configuration
    /// Seconds between the per-stream statistics lines on the log (0: none).
    public var statisticsIntervalSeconds: Double
    /// CURVE: the collector's keys and the client keys it accepts (capture nodes, workers, tails); nil for plain TCP.
    public var security: CurveSecurity?
    /// `--max-pending-bytes`: estimated bytes of all buffered results together.
    public var maxPendingBytes: Int = 256 << 20
    /// `--max-streams`: open (stream, epoch) pairs (REFERENCE-NODES.md §4.1).
    public var maxStreams: Int = 1024
    /// `--max-captures`: capture nodes announced at once.
    public var maxCaptures: Int = 1024
    /// `--max-workers`: worker identities remembered.
    public var maxWorkers: Int = 4096
    /// `--max-metric-streams`: distinct `stream` labels on `facewire_stream_frames_total` (the rest: `_other`).
    public var maxMetricStreams: Int = 64
    /// `--stream-idle-timeout`: seconds without input after which an open stream is closed (0: never).
    public var streamIdleTimeoutSeconds: Double = 60
    /// `--max-pulse-tracks`: tracks whose heart rate is estimated at once, over all streams (the rest:
    /// `pulse_refused_cap`).
    public var maxPulseTracks: Int = 1024
    /// `--pulse-mesh-forehead`: read a moving face's heart rate on the forehead the face mesh outlines.
    public var pulseMeshForehead = false

    /// `--shard K/N`: which shard this collector is (SPEC.md 19); nil when not sharded.
    public var shard: ShardIdentity?

    /// `--election`: a failover group (SPEC.md 18); nil for a single collector.
    public var failover: FailoverSettings?

    /// The core's settings.
    public var limits: CollectorLimits {
        CollectorLimits(
            maxDelay: CollectorLimits.nanoseconds(seconds: Double(maxDelayMilliseconds) / 1000), maxPending: maxPending, maxPendingBytes: maxPendingBytes, maxStreams: maxStreams,
            maxCaptures: maxCaptures, maxWorkers: maxWorkers, maxMetricStreams: maxMetricStreams,
            streamIdleTimeout: CollectorLimits.nanoseconds(seconds: streamIdleTimeoutSeconds),
            captureExpiry: CollectorLimits.nanoseconds(seconds: captureExpirySeconds),
            statisticsInterval: CollectorLimits.nanoseconds(seconds: statisticsIntervalSeconds), maxPulseTracks: maxPulseTracks,
            pulseMeshForehead: pulseMeshForehead)
    }

    public init(
        bind: String = "tcp://*:\(Wire.defaultCollectorPort)",
        publish: String = "tcp://*:\(Wire.defaultPublishPort)",
        maxDelayMilliseconds: Int = 1000,
        maxPending: Int = 256,
        captureExpirySeconds: Double = 10,
        tracking: FaceTracker.Configuration = FaceTracker.Configuration(),
        statisticsIntervalSeconds: Double = 5,
        security: CurveSecurity? = nil
    ) {
        self.security = security
        self.bind = bind
        self.publish = publish
        self.maxDelayMilliseconds = maxDelayMilliseconds
        self.maxPending = maxPending
        self.captureExpirySeconds = captureExpirySeconds
        self.tracking = tracking
        self.statisticsIntervalSeconds = statisticsIntervalSeconds
    }
}
