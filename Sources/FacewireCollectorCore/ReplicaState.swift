import FacewireProtocol
import FacewireTracking
import FacewireVocabulary
import Foundation

/// What a standby collector keeps of its active's state (SPEC.md 18), built from the ``Replication`` messages it
/// receives, and what it acknowledges. Pure: no sockets and no clock.
///
/// The active numbers its steps 1, 2, 3, ... A standby applies them strictly in order; one that has nothing yet, or
/// sees a gap, asks for a snapshot (an acknowledgement of number 0, at most once per ``Settings/snapshotRetry``),
/// which replaces everything it had. Each step's publications are kept until the active says they went out
/// (`published_through`): a standby that takes over republishes the rest, under their original numbers.
///
/// Everything from the wire is checked: a checkpoint refused is counted by name and its stream forgotten; open streams,
/// remembered ends and kept publications are bounded.
public struct ReplicaState {
    public struct Settings: Sendable, Equatable {
        /// The most open (stream, epoch) pairs kept (the collector's 2 × `--max-streams`).
        public var maxOpen: Int
        /// The most ended pairs remembered (the oldest are forgotten first).
        public var maxEnded: Int
        /// The most bytes of publications kept for republishing (the oldest are dropped first, and counted).
        public var maxReplayBytes: Int
        /// The shortest time between two requests for a snapshot, in nanoseconds.
        public var snapshotRetry: UInt64
        /// How often the standby acknowledges without news (a detached standby is then sent a snapshot), ns.
        public var ackInterval: UInt64

        public init(
            maxOpen: Int, maxEnded: Int, maxReplayBytes: Int = 64 << 20, snapshotRetry: UInt64 = 500_000_000,
            ackInterval: UInt64 = 1_000_000_000
        ) {
            self.maxOpen = max(1, maxOpen)
            self.maxEnded = max(1, maxEnded)
            self.maxReplayBytes = max(0, maxReplayBytes)
            self.snapshotRetry = snapshotRetry
            self.ackInterval = ackInterval
        }
    }

    /// What the standby's shell sends.
    public enum Action: Sendable, Equatable {
        /// An acknowledgement to the active: the highest step applied in order, 0 to ask for a snapshot.
        case ack(leaderEpoch: UInt64, number: UInt64)
    }

    public typealias Output = Effects<Action>
    public typealias Key = StreamTable<FrameResult>.Key

    public let settings: Settings
    public let tracking: FaceTracker.Configuration
    /// The epoch of the active followed (the highest seen).
    public private(set) var leaderEpoch: UInt64 = 0
    /// The highest step applied in order; 0 until a snapshot arrives from the current active.
    public private(set) var applied: UInt64 = 0
    /// When the last message of the current active arrived (monotonic ns).
    public private(set) var lastHeard: UInt64?

    var open: [Key: CollectorCore.StreamResume] = [:]
    /// Ended keys with the order they ended in (the oldest are forgotten first).
    var closed: [Key: UInt64] = [:]
    var closedOrder: UInt64 = 0
    var replay: [(number: UInt64, publications: [Data], bytes: Int)] = []
    var replayBytes = 0
    var lastSnapshotRequest: UInt64?
    var lastAck: UInt64?

    public init(settings: Settings, tracking: FaceTracker.Configuration) {
        self.settings = settings
        self.tracking = tracking
    }

    // MARK: - Observing

    /// Whether the state follows the current active in order (a snapshot was applied and no gap seen since).
    public var isCurrent: Bool { applied > 0 }

    /// The open streams to continue, sorted by key.
    public var resumes: [CollectorCore.StreamResume] { open.values.sorted { $0.key < $1.key } }

    /// The ended keys remembered, sorted.
    public var closedKeys: [Key] { closed.keys.sorted() }

    /// The publications not known to have gone out, in order: a standby that takes over publishes them again.
    public var replayPublications: [Data] { replay.flatMap(\.publications) }

    /// How many open streams are kept.
    public var openCount: Int { open.count }

    // MARK: - Inputs

    /// A message from the active.
    public mutating func receive(_ message: Replication, at now: UInt64) -> Output {
        var out = Output()
        if message.leaderEpoch < leaderEpoch {
            out.count("replication_stale_epoch")
            return out
        }
        if message.leaderEpoch > leaderEpoch {
            leaderEpoch = message.leaderEpoch
            applied = 0
            lastSnapshotRequest = nil
        }
        lastHeard = now
        guard message.number > 0 else {
            out.count("replication_refused_number")
            return out
        }
        if message.snapshot {
            open.removeAll()
            closed.removeAll()
            replay.removeAll()
            replayBytes = 0
            apply(message, &out)
            applied = message.number
            out.count("replication_snapshots")
            acknowledge(now, &out)
        } else if applied == 0 {
            askSnapshot(now, &out)
        } else if message.number == applied {
            // A heartbeat (or a repeat): only what went out changes.
            if !message.checkpoints.isEmpty || !message.publications.isEmpty { out.count("replication_repeated") }
        } else if message.number == applied &+ 1 {
            apply(message, &out)
            applied = message.number
            acknowledge(now, &out)
        } else if message.number > applied {
            out.count("replication_gap")
            applied = 0
            askSnapshot(now, &out)
        } else {
            out.count("replication_old")
        }
        if applied > 0 { confirmPublished(through: min(message.publishedThrough, applied)) }
        return out
    }

    /// Lets time pass (while connected to an active): asks for a snapshot until one comes (a standby that just
    /// connected starts so), and acknowledges every ``Settings/ackInterval`` (an active that forgot this standby
    /// then sends it a snapshot).
    public mutating func tick(at now: UInt64) -> Output {
        var out = Output()
        if applied == 0 {
            askSnapshot(now, &out)
        } else if lastAck.map({ now &- $0 >= settings.ackInterval }) ?? true {
            acknowledge(now, &out)
        }
        return out
    }

    // MARK: - Private

    private mutating func askSnapshot(_ now: UInt64, _ out: inout Output) {
        if let last = lastSnapshotRequest, now &- last < settings.snapshotRetry { return }
        lastSnapshotRequest = now
        lastAck = now
        out.count("replication_snapshot_requests")
        out.act(.ack(leaderEpoch: leaderEpoch, number: 0))
    }

    private mutating func acknowledge(_ now: UInt64, _ out: inout Output) {
        lastAck = now
        out.act(.ack(leaderEpoch: leaderEpoch, number: applied))
    }

    private mutating func apply(_ message: Replication, _ out: inout Output) {
        for checkpoint in message.checkpoints {
            let key = Key(stream: checkpoint.stream, epoch: checkpoint.epoch)
            if checkpoint.closed {
                guard Wire.isValidStreamID(checkpoint.stream) else {
                    out.count("replication_refused_stream")
                    continue
                }
                open[key] = nil
                remember(closed: key)
                continue
            }
            switch CollectorCore.resume(from: checkpoint, tracking: tracking) {
            case .success(let resume):
                if open[key] == nil, open.count >= settings.maxOpen {
                    out.count("replication_refused_streams_cap")
                    continue
                }
                open[key] = resume
                closed[key] = nil
            case .failure(let refusal):
                out.count("replication_refused_\(refusal.rawValue)")
                open[key] = nil
            }
        }
        guard !message.publications.isEmpty else { return }
        // No overflow: a message is at most the socket's limit, and the total is cut to maxReplayBytes after each.
        let bytes = message.publications.reduce(0) { $0 + $1.count }
        replay.append((message.number, message.publications, bytes))
        replayBytes += bytes
        while replayBytes > settings.maxReplayBytes, !replay.isEmpty {
            let dropped = replay.removeFirst()
            replayBytes -= dropped.bytes
            out.count("replication_replay_dropped", UInt64(dropped.publications.count))
        }
    }

    private mutating func remember(closed key: Key) {
        closedOrder &+= 1
        closed[key] = closedOrder
        if closed.count > settings.maxEnded {
            let keep = closed.sorted { $0.value > $1.value }.prefix(settings.maxEnded / 2 + 1)
            closed = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
        }
    }

    private mutating func confirmPublished(through number: UInt64) {
        while let first = replay.first, first.number <= number {
            replayBytes -= first.bytes
            replay.removeFirst()
        }
    }
}
