/// The collector's settings that the pure core needs: waits, caps and intervals (SPEC.md 9, 14.3; REFERENCE-NODES.md §4.1).
///
/// Times are in nanoseconds of the injected monotonic clock. Every cap bounds what peers can make the
/// collector remember; hitting one is counted by name and logged at most once per ``noticeInterval``.
public struct CollectorLimits: Sendable, Equatable {
    /// `--max-delay`: the wait for a missing frame once a later one is known.
    public var maxDelay: UInt64
    /// `--max-pending`: results buffered per (stream, epoch), and separately stored skip runs; also the longest
    /// dropped run published frame by frame (longer runs are one message with `runLength`).
    public var maxPending: Int
    /// `--max-pending-bytes`: the estimated size of all buffered results together, over every stream; a result
    /// that would pass it is refused (`results_refused_pending_bytes`) and its frame drops as `timeout`.
    public var maxPendingBytes: Int
    /// `--max-streams`: open (stream, epoch) pairs; a new stream beyond it is refused (`streams_refused_cap`).
    public var maxStreams: Int
    /// `--max-captures`: capture nodes announced at once; a new one beyond it is refused (`captures_refused_cap`).
    public var maxCaptures: Int
    /// `--max-workers`: worker identities remembered for pushing Welcomes; beyond it a worker is still answered
    /// but not remembered (`workers_refused_cap`).
    public var maxWorkers: Int
    /// `--max-metric-streams`: distinct `stream` label values on `facewire_stream_frames_total`; further streams
    /// are counted under `stream="_other"`.
    public var maxMetricStreams: Int
    /// `--stream-idle-timeout`: an open stream without any input (hello, result, skip, end) for this long is
    /// closed: its gaps drop as `timeout` and its summary is published. 0 = never.
    public var streamIdleTimeout: UInt64
    /// Seconds without a hello after which a capture node is no longer announced (and forgotten).
    public var captureExpiry: UInt64
    /// A worker not heard from for this long is forgotten.
    public var workerExpiry: UInt64
    /// Between two `StreamStatistics` windows (0 = none).
    public var statisticsInterval: UInt64
    /// The least time between two log lines about the same kind of rejection or cap.
    public var noticeInterval: UInt64
    /// `--max-pulse-tracks`: tracks whose heart rate is estimated at once, over all streams (each holds up to a
    /// window of skin samples and its last reported rate); more are counted (`pulse_refused_cap`) and get none.
    public var maxPulseTracks: Int
    /// `--pulse-mesh-forehead`: a moving face's heart rate is read on the forehead the face mesh outlines, where the
    /// worker sends one (``PulseEstimator/Configuration/meshForehead``; off by default).
    public var pulseMeshForehead: Bool

    public init(
        maxDelay: UInt64 = 1_000_000_000, maxPending: Int = 256, maxPendingBytes: Int = 256 << 20, maxStreams: Int = 1024, maxCaptures: Int = 1024,
        maxWorkers: Int = 4096, maxMetricStreams: Int = 64, streamIdleTimeout: UInt64 = 60_000_000_000,
        captureExpiry: UInt64 = 10_000_000_000, workerExpiry: UInt64 = 10_000_000_000,
        statisticsInterval: UInt64 = 5_000_000_000, noticeInterval: UInt64 = 10_000_000_000, maxPulseTracks: Int = 256,
        pulseMeshForehead: Bool = false
    ) {
        self.maxDelay = maxDelay
        self.maxPending = max(1, maxPending)
        self.maxPendingBytes = max(0, maxPendingBytes)
        self.maxStreams = max(1, maxStreams)
        self.maxCaptures = max(0, maxCaptures)
        self.maxWorkers = max(0, maxWorkers)
        self.maxMetricStreams = max(0, maxMetricStreams)
        self.streamIdleTimeout = streamIdleTimeout
        self.captureExpiry = captureExpiry
        self.workerExpiry = workerExpiry
        self.statisticsInterval = statisticsInterval
        self.noticeInterval = noticeInterval
        self.maxPulseTracks = max(0, maxPulseTracks)
        self.pulseMeshForehead = pulseMeshForehead
    }

    /// Seconds (a flag's value) as nanoseconds: negative, NaN and infinite values never trap (they clamp).
    public static func nanoseconds(seconds: Double) -> UInt64 {
        guard seconds.isFinite else { return seconds > 0 ? .max : 0 }
        let value = seconds * 1e9
        return value <= 0 ? 0 : value >= 1.8e19 ? .max : UInt64(value)
    }
}
