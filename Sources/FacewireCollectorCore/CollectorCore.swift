import FacewireVocabulary
import FacewireProtocol
import FacewireTracking
import FacewirePulse

/// Every decision the collector makes, as a pure state machine (SPEC.md 7.2, 9, 14): validation of what peers
/// send, the registry of capture nodes, workers and streams, epochs (``StreamTable``), ordering and drops
/// (``ReorderBuffer``), tracking (``FaceTracker``), statistics, the caps, and what to publish.
///
/// No sockets and no clock: each input comes with its ``Instant``, and each call returns a ``CollectorOutput``
/// for the shell (`CollectorNode`) to carry out. Every value from the network is bounded before it costs memory
/// or work, arithmetic on it never traps, and every refusal is counted by name.
public struct CollectorCore {
    /// When an input arrived: monotonic nanoseconds (waits, expiry) and wall-clock microseconds since the Unix
    /// epoch (the capture-time check and `total_ms`).
    /// The moment every input is handed (the one ``FacewireVocabulary/Instant`` of every core).
    public typealias Instant = FacewireVocabulary.Instant

    typealias Key = StreamTable<FrameResult>.Key

    /// What the collector keeps per open (stream, epoch) beside the table's reorder buffer.
    struct StreamState {
        var tracker: FaceTracker
        var statistics: StreamStatistics
        /// Frames emitted with a worker's own status (the buffer counts them all as processed).
        var workerDropped: UInt64 = 0
        var errors: UInt64 = 0
        /// The heart-rate state of the stream's live tracks that sent skin samples (at most
        /// ``CollectorLimits/maxPulseTracks`` over all streams); a track's goes when it leaves.
        var pulse: [UInt64: PulseTrack] = [:]
        /// The last input of any kind (`--stream-idle-timeout`).
        var lastInput: UInt64
        /// The number the stream's next published message gets, when the collector replicates (SPEC.md 18); nil
        /// without failover, whose messages carry no number.
        var nextPublication: UInt64?
        /// Set when the stream was taken over from another collector: the tracker bridges the handover's gap at the
        /// next processed frame (``FaceTracker/bridge(to:maxGap:)``).
        var bridgesHandover = false

        /// A message of this stream, numbered when the collector replicates.
        mutating func message(_ key: Key, _ body: StreamMessage.OneOf_Body, leaderEpoch: UInt64) -> StreamMessage {
            var message = StreamMessage(stream: key.stream, epoch: key.epoch, body: body)
            if let number = nextPublication {
                message.publication = number
                message.leaderEpoch = leaderEpoch
                nextPublication = number &+ 1
            }
            return message
        }

        /// The `KIND_LEFT` events of `tracks`, each with the last heart rate reported for it (if any); their heart-rate
        /// state goes.
        mutating func leftEvents(_ tracks: [TrackEvent]) -> [FaceEvent] {
            tracks.map { CollectorCore.faceEvent(.left, $0, heartRate: pulse.removeValue(forKey: $0.trackingID)?.reported) }
        }
    }

    /// One track's heart rate: its estimator, and the last rate set on one of its faces, which its `left` event
    /// carries (SPEC.md 6.4).
    struct PulseTrack {
        var estimator: PulseEstimator
        var reported: Facewire_V1_HeartRate?

        init(meshForehead: Bool) {
            var configuration = PulseEstimator.Configuration()
            configuration.meshForehead = meshForehead
            estimator = PulseEstimator(configuration: configuration)
        }
    }

    struct CaptureEntry {
        var info: CaptureInfo
        var lastHello: UInt64
    }

    public let limits: CollectorLimits
    public let tracking: FaceTracker.Configuration
    /// The PUB endpoint announced in every Welcome (set by the shell once bound).
    public var publishEndpoint = "" {
        didSet {
            cachedWelcome = nil
            cachedShortWelcome = nil
        }
    }
    /// What this collector is in a failover group, as every Welcome says (SPEC.md 18). A standby takes no input: it
    /// answers every message with a Welcome naming the active, and counts what it refused.
    public var announcement = Announcement() {
        didSet {
            cachedWelcome = nil
            cachedShortWelcome = nil
        }
    }

    /// Which shard this collector is (`--shard K/N`, SPEC.md 19), as every Welcome says; nil when not sharded. Input for
    /// a stream another shard owns is still taken (everything of one capture node comes here, so the stream stays
    /// whole), but counted by kind (`shard_foreign_<kind>`) and logged: the clients' `--collector` lists disagree.
    public var shard: ShardIdentity? {
        didSet {
            cachedWelcome = nil
            cachedShortWelcome = nil
        }
    }

    /// A collector's part in its failover group, as its Welcome announces it.
    public struct Announcement: Sendable, Equatable {
        public var role: CollectorRole
        /// The active's fencing epoch (this collector's, when active); 0 without election or while none is known.
        public var leaderEpoch: UInt64
        /// A standby's: the active's control endpoint ("" when none is known).
        public var activeEndpoint: String

        public init(role: CollectorRole = .single, leaderEpoch: UInt64 = 0, activeEndpoint: String = "") {
            self.role = role
            self.leaderEpoch = leaderEpoch
            self.activeEndpoint = activeEndpoint
        }
    }

    var table: StreamTable<FrameResult>
    var streams: [Key: StreamState] = [:]
    var captures: [String: CaptureEntry] = [:]
    /// Workers that said hello recently, by ROUTER identity, with the time of their last hello.
    var workers: [[UInt8]: UInt64] = [:]
    var labels: MetricLabels
    var notices: NoticeLog
    /// Capture nodes changed since the last Welcome pushed to every worker.
    var capturesChanged = false
    /// The Welcome for the current capture nodes, serialised once (a hello flood must not rebuild it per hello).
    var cachedWelcome: (envelope: Envelope, bytes: [UInt8])?
    var lastStatistics: UInt64?
    var lastHousekeeping: UInt64?
    /// Which idle worker thread takes which capture node's next frame (dispatch protocol 2).
    public internal(set) var broker: DispatchBroker
    /// Set while the collector is the active of a failover group (``startReplicating(leaderEpoch:)``): its fencing
    /// epoch, carried by every message it publishes. Nil without failover.
    public internal(set) var leaderEpoch: UInt64?
    /// The (stream, epoch) pairs whose state changed since ``takeCheckpoints()`` (only while replicating).
    var touched: Set<Key> = []
    /// A standby's: the peers that said hello to it, with when (bounded), told at once when it takes over.
    var standbyPeers: [[UInt8]: UInt64] = [:]
    /// The Welcome without the capture nodes a failover group's active answers a capture node's hello with.
    var cachedShortWelcome: (envelope: Envelope, bytes: [UInt8])?

    /// The longest endpoint a capture node may announce, in bytes (a Welcome lists up to `maxCaptures` of them
    /// and must stay under 1 MiB).
    public static let maxEndpointBytes = 256
    /// The most bytes of a reset's request id and of a skip's reason.
    public static let maxRequestIDBytes = 64
    public static let maxReasonBytes = 256

    public init(
        limits: CollectorLimits, tracking: FaceTracker.Configuration = FaceTracker.Configuration(),
        dispatch: DispatchBroker.Settings = DispatchBroker.Settings()
    ) {
        self.limits = limits
        self.tracking = tracking
        table = StreamTable(maxDelayNanoseconds: limits.maxDelay, maxPending: limits.maxPending, maxOpen: limits.maxStreams)
        labels = MetricLabels(maxStreams: limits.maxMetricStreams)
        notices = NoticeLog(interval: limits.noticeInterval)
        broker = DispatchBroker(settings: dispatch)
    }

    // MARK: - Observing

    /// The earliest monotonic time at which ``tick(at:)`` has work without new input.
    public var nextDeadline: UInt64? { table.nextDeadline }

    /// Figures for the gauges and `/healthz`.
    public struct Gauges: Sendable, Equatable {
        public var pending: Int
        public var streams: Int
        public var workers: Int
        public var captures: Int
        /// Dispatch (SPEC 3): worker threads known, idle, assigned, ejected; capture nodes waiting for a thread.
        public var dispatch: DispatchBroker.Figures
    }

    public func gauges(at now: UInt64) -> Gauges {
        let pending = table.openKeys.reduce(0) { $0 + (table.buffer($1)?.pendingCount ?? 0) }
        let live = captures.values.filter { now &- $0.lastHello < limits.captureExpiry }.count
        return Gauges(pending: pending, streams: table.openCount, workers: workers.count, captures: live, dispatch: broker.figures)
    }

    /// The next sequence each open (stream, epoch) will publish (tests).
    public var heads: [String: UInt64] {
        var out: [String: UInt64] = [:]
        for key in table.openKeys { out[key.description] = table.buffer(key)?.head }
        return out
    }

    // MARK: - Inputs

    /// A control message that could not be decoded (`code`: a ``ProtocolError`` code or `parts`).
    public mutating func malformed(code: String, at now: Instant) -> CollectorOutput {
        var out = CollectorOutput()
        out.count("control_malformed")
        out.count("control_rejected_\(code)")
        notice("control_malformed", "malformed control message", ["code": code], now, &out)
        return out
    }

    /// A decoded envelope from the peer with ROUTER `identity`, at `now`.
    public mutating func handle(_ envelope: Envelope, from identity: [UInt8], peerAddress: String?, at now: Instant) -> CollectorOutput {
        var out = CollectorOutput()
        if announcement.role == .standby {
            answerAsStandby(envelope, identity: identity, now: now, &out)
            return out
        }
        if let shard { checkOwnership(envelope, shard: shard, now: now, &out) }
        switch envelope.body {
        case .hello(let hello):
            handleHello(hello, identity: identity, peerAddress: peerAddress, now: now, &out)
        case .result(let result):
            out.count("results")
            // The thread answered its frame, whatever becomes of the result (a refused one is counted below).
            broker.result(for: result.stream, from: identity, at: now.monotonicNs, into: &out)
            if let rejection = ResultValidation.rejection(of: result, wallMicroseconds: now.wallUs) {
                out.count("results_rejected_\(rejection.rawValue)")
                notice("results_rejected_\(rejection.rawValue)", "result rejected", [
                    "stream": String(result.stream.prefix(64)), "seq": "\(result.seq)", "why": rejection.rawValue,
                    "capture_time_us": "\(result.captureTimeUs)",
                ], now, &out)
                return out
            }
            let bytes = Self.estimatedSize(of: result)
            // The head's result is always taken: it is emitted at once and drains the buffer.
            let isHead = table.buffer(Key(stream: result.stream, epoch: result.epoch))?.head == result.seq
            guard isHead || table.pendingBytes <= limits.maxPendingBytes - min(bytes, limits.maxPendingBytes) else {
                out.count("results_refused_pending_bytes")
                notice("results_refused_pending_bytes", "result refused: --max-pending-bytes of buffered results reached", [
                    "max": "\(limits.maxPendingBytes)",
                ], now, &out)
                return out
            }
            apply(.result(seq: result.seq, payload: result, bytes: bytes), stream: result.stream, epoch: result.epoch, now: now, &out)
        case .idle(let idle):
            broker.idle(idle, from: identity, at: now.monotonicNs, into: &out)
        case .request(let request):
            broker.request(request, from: identity, at: now.monotonicNs, into: &out)
        case .skipped(let skipped):
            guard skipped.count > 0 else { return out }
            guard skipped.reason.utf8.count <= Self.maxReasonBytes else {
                out.count("skipped_rejected_reason")
                notice("skipped_rejected_reason", "skip rejected: reason too long", [:], now, &out)
                return out
            }
            out.count("skipped", skipped.count)
            apply(
                .skip(firstSeq: skipped.firstSeq, count: skipped.count, reason: DropReason(skipped.reason)),
                stream: skipped.stream, epoch: skipped.epoch, now: now, &out)
        case .end(let end):
            // Logged once per epoch: repeats, stale and refused ends (a peer can send any number) are only counted.
            let isFirst = table.buffer(Key(stream: end.stream, epoch: end.epoch))?.endSeq == nil
            if apply(.end(nextSeq: end.nextSeq), stream: end.stream, epoch: end.epoch, now: now, &out), isFirst {
                out.log(.info, "stream ended at the source", ["stream": end.stream, "epoch": "\(end.epoch)", "frames": "\(end.nextSeq)"])
            }
        case .reset(let request):
            guard request.requestID.utf8.count <= Self.maxRequestIDBytes, request.stream.isEmpty || Wire.isValidStreamID(request.stream)
            else {
                out.count("control_malformed")
                notice("invalid_reset", "invalid reset request", ["stream": String(request.stream.prefix(64))], now, &out)
                return out
            }
            out.count("resets")
            var reply = ResetReply()
            reply.requestID = request.requestID
            reply.streams = reset(stream: request.stream, &out)
            out.act(.reply(.init(identities: [identity], envelope: Envelope(.resetReply(reply)), lostCounter: "reply_lost")))
        case .welcome, .resetReply, .assignment, .none:
            out.count("control_unexpected")
        }
        return out
    }

    /// Lets time pass: gives up missing frames, closes idle streams, publishes statistics, forgets silent peers and
    /// pushes a Welcome to every worker when the capture nodes changed.
    public mutating func tick(at now: Instant) -> CollectorOutput {
        var out = CollectorOutput()
        let t = now.monotonicNs
        for (key, emissions) in table.tick(at: t) {
            publish(emissions, key: key, now: now, &out)
        }
        broker.tick(at: t, into: &out)
        if lastHousekeeping.map({ t &- $0 >= 1_000_000_000 }) ?? true {
            lastHousekeeping = t
            housekeeping(now, &out)
        }
        if limits.statisticsInterval > 0 {
            if let last = lastStatistics {
                if t &- last >= limits.statisticsInterval {
                    lastStatistics = t
                    reportStatistics(t, &out)
                }
            } else {
                lastStatistics = t
            }
        }
        return out
    }

    /// A reply could not be sent: the peer at `identity` is gone (`EHOSTUNREACH`). A worker is forgotten; an Assignment
    /// that did not reach its capture node frees its thread at once (``DispatchBroker/assignmentUndeliverable(_:to:at:into:)``),
    /// which may be assigned again (the output).
    public mutating func replyUndeliverable(_ reply: CollectorAction.Reply, to identity: [UInt8], at now: Instant) -> CollectorOutput {
        workers[identity] = nil
        var out = CollectorOutput()
        if case .assignment(let assignment) = reply.envelope.body {
            broker.assignmentUndeliverable(assignment, to: identity, at: now.monotonicNs, into: &out)
        }
        return out
    }

    /// What a buffered result costs, roughly, in bytes (its strings, its faces and a fixed overhead).
    static func estimatedSize(of result: FrameResult) -> Int {
        256 + result.stream.utf8.count + result.reason.utf8.count + result.worker.utf8.count + result.faces.count * 200
    }

    /// The estimated size of all buffered results (``CollectorLimits/maxPendingBytes``).
    public var pendingBytes: Int { table.pendingBytes }

    // MARK: - Private

    mutating func notice(_ kind: String, _ message: String, _ metadata: [String: String], _ now: Instant, _ out: inout CollectorOutput) {
        if let line = notices.note(kind, message, metadata, at: now.monotonicNs) { out.logs.append(line) }
    }

    private mutating func housekeeping(_ now: Instant, _ out: inout CollectorOutput) {
        let t = now.monotonicNs
        workers = workers.filter { t &- $0.value < limits.workerExpiry }
        let before = captures.count
        captures = captures.filter { t &- $0.value.lastHello < limits.captureExpiry }
        if captures.count != before {
            capturesChanged = true
            cachedWelcome = nil
        }
        if limits.streamIdleTimeout > 0 {
            for key in table.openKeys {
                guard let state = streams[key], t &- state.lastInput >= limits.streamIdleTimeout else { continue }
                out.count("streams_idle_closed")
                out.log(.info, "stream idle: closed", ["stream": key.stream, "epoch": "\(key.epoch)"])
                publish(table.close(key, reason: .timeout, at: t), key: key, now: now, &out)
            }
        }
        if capturesChanged {
            capturesChanged = false
            if !workers.isEmpty {
                out.act(.reply(welcome(to: Array(workers.keys))))
            }
        }
    }

    /// A standby's answer to anything: a Welcome naming the active, so that the sender moves there (SPEC.md 18). What
    /// it refused is counted by kind; it takes nothing in.
    private mutating func answerAsStandby(_ envelope: Envelope, identity: [UInt8], now: Instant, _ out: inout CollectorOutput) {
        let kind: String
        switch envelope.body {
        case .hello: kind = "hello"
        case .result: kind = "result"
        case .skipped: kind = "skipped"
        case .end: kind = "end"
        case .reset: kind = "reset"
        case .request: kind = "request"
        case .idle: kind = "idle"
        case .welcome, .resetReply, .assignment, .none:
            out.count("control_unexpected")
            return
        }
        if kind == "hello" {
            rememberStandbyPeer(identity, now.monotonicNs)
        } else {
            out.count("standby_refused_\(kind)")
            notice("standby_refused", "a standby takes no input: the sender is told where the active is", [
                "kind": kind, "active": announcement.activeEndpoint,
            ], now, &out)
        }
        out.act(.reply(welcome(to: [identity])))
    }

    /// Counts (and logs, rate-limited) input for a stream that `shard` does not own.
    private mutating func checkOwnership(_ envelope: Envelope, shard: ShardIdentity, now: Instant, _ out: inout CollectorOutput) {
        let kind: String
        let stream: String
        switch envelope.body {
        case .hello(let hello) where hello.role == .capture: (kind, stream) = ("hello", hello.stream)
        case .result(let result): (kind, stream) = ("result", result.stream)
        case .skipped(let skipped): (kind, stream) = ("skipped", skipped.stream)
        case .end(let end): (kind, stream) = ("end", end.stream)
        case .request(let request): (kind, stream) = ("request", request.stream)
        default: return
        }
        guard Wire.isValidStreamID(stream) else { return }
        let owner = ShardMap.owner(of: stream, shards: shard.count)
        guard owner != shard.index else { return }
        out.count("shard_foreign_\(kind)")
        notice("shard_foreign", "input for a stream another shard owns (taken; check that every node lists the same shards)", [
            "kind": kind, "stream": stream, "shard": "\(shard)", "owner": "\(owner)/\(shard.count)",
        ], now, &out)
    }

    /// The most peers a standby remembers: every worker and capture node it may have to tell of a takeover.
    var maxStandbyPeers: Int { min(limits.maxWorkers, Int.max / 4) + min(limits.maxCaptures, Int.max / 4) + 1024 }

    private mutating func rememberStandbyPeer(_ identity: [UInt8], _ now: UInt64) {
        if standbyPeers[identity] == nil, standbyPeers.count >= maxStandbyPeers {
            // Forget those not heard from for the longest (hellos come every second from the live ones).
            let keep = standbyPeers.sorted { $0.value > $1.value }.prefix(maxStandbyPeers / 2)
            standbyPeers = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
        }
        standbyPeers[identity] = now
    }

    /// A standby's peers heard from within the capture expiry: those a new active tells of itself at once.
    public func standbyPeerIdentities(at now: UInt64) -> [[UInt8]] {
        standbyPeers.filter { now &- $0.value < limits.captureExpiry }.map(\.key)
    }

    /// Tells `identities` (the peers of the standby this collector was) that it is now the active one: a Welcome each,
    /// so that they move here without waiting for their next hello (SPEC.md 18).
    public mutating func announceTakeover(to identities: [[UInt8]]) -> CollectorOutput {
        var out = CollectorOutput()
        guard !identities.isEmpty else { return out }
        out.count("failover_welcomes", UInt64(identities.count))
        out.act(.reply(welcome(to: identities)))
        return out
    }

    /// The Welcome a failover group's active answers a capture node's hello with: its role and epoch, no capture list
    /// (a capture node has no use for it, and a thousand of them would each get a thousand entries every second).
    private mutating func shortWelcome(to identities: [[UInt8]]) -> CollectorAction.Reply {
        if cachedShortWelcome == nil { cachedShortWelcome = makeWelcome(captures: []) }
        return .init(
            identities: identities, envelope: cachedShortWelcome!.envelope, lostCounter: "welcome_lost", bytes: cachedShortWelcome!.bytes)
    }

    /// A Welcome to `identities`: the capture nodes heard from within `captureExpiry` (pruned once a second), sorted.
    private mutating func welcome(to identities: [[UInt8]]) -> CollectorAction.Reply {
        if cachedWelcome == nil { cachedWelcome = makeWelcome(captures: captures.values.map(\.info).sorted { $0.stream < $1.stream }) }
        return .init(identities: identities, envelope: cachedWelcome!.envelope, lostCounter: "welcome_lost", bytes: cachedWelcome!.bytes)
    }

    /// A Welcome listing `captures`, with the results endpoint and this collector's part in its group, serialised once.
    private func makeWelcome(captures: [CaptureInfo]) -> (envelope: Envelope, bytes: [UInt8]) {
        var welcome = Welcome()
        welcome.captures = captures
        welcome.publishEndpoint = publishEndpoint
        welcome.role = announcement.role
        welcome.leaderEpoch = announcement.leaderEpoch
        welcome.activeEndpoint = announcement.activeEndpoint
        if let shard {
            welcome.shard = UInt32(shard.index)
            welcome.shardCount = UInt32(shard.count)
        }
        let envelope = Envelope(.welcome(welcome))
        return (envelope, (try? envelope.serializedBytes()) ?? [])
    }

    private mutating func handleHello(_ hello: Hello, identity: [UInt8], peerAddress: String?, now: Instant, _ out: inout CollectorOutput) {
        let t = now.monotonicNs
        if hello.role == .capture || hello.role == .worker, hello.dispatch < Wire.dispatchVersion {
            // A node of dispatch protocol 1 (credits) cannot be paired: refused, counted and logged, never a silent stall.
            // Its capture node's skips and end still account for its frames (all dropped at the source, `no-worker`).
            out.count("hello_refused_dispatch_\(max(1, hello.dispatch))")
            notice("hello_refused_dispatch", "node refused: it speaks dispatch protocol \(max(1, hello.dispatch)), this collector \(Wire.dispatchVersion); upgrade it", [
                "role": hello.role == .capture ? "capture" : "worker", "node": String(hello.nodeID.prefix(64)),
                "stream": String(hello.stream.prefix(64)),
            ], now, &out)
            return
        }
        switch hello.role {
        case .capture:
            let endpoint = hello.frameEndpoint
            let key = hello.curvePublicKey
            let preview = hello.previewEndpoint
            guard !endpoint.isEmpty, endpoint.utf8.count <= Self.maxEndpointBytes, key.isEmpty || key.utf8.count == 40,
                  preview.utf8.count <= Self.maxEndpointBytes
            else {
                out.count("hello_rejected_endpoint")
                notice("hello_rejected_endpoint", "capture hello rejected: endpoint or key out of bounds", [
                    "stream": String(hello.stream.prefix(64)), "endpoint_bytes": "\(endpoint.utf8.count)", "key_bytes": "\(key.utf8.count)",
                    "preview_bytes": "\(preview.utf8.count)",
                ], now, &out)
                return
            }
            let isKnown = captures[hello.stream] != nil
            if !isKnown, Wire.isValidStreamID(hello.stream), captures.count >= limits.maxCaptures {
                out.count("captures_refused_cap")
                notice("captures_refused_cap", "capture node refused: --max-captures reached", [
                    "stream": hello.stream, "max": "\(limits.maxCaptures)",
                ], now, &out)
                return
            }
            guard apply(.hello(nextSeq: hello.nextSeq), stream: hello.stream, epoch: hello.epoch, now: now, &out) else { return }
            var info = CaptureInfo()
            info.stream = hello.stream
            info.epoch = hello.epoch
            info.frameEndpoint = Endpoint.resolvingWildcard(endpoint, host: peerAddress ?? "127.0.0.1")
            info.curvePublicKey = key
            if !preview.isEmpty {
                info.previewEndpoint = Endpoint.resolvingWildcard(preview, host: peerAddress ?? "127.0.0.1")
            }
            if captures[hello.stream]?.info != info {
                out.log(.info, "capture announced", ["stream": info.stream, "endpoint": info.frameEndpoint])
                // Every live worker hears of it at the next tick (one Welcome per worker, however many hellos).
                capturesChanged = true
                cachedWelcome = nil
            }
            captures[hello.stream] = CaptureEntry(info: info, lastHello: t)
            if announcement.role == .active || shard != nil {
                // In a failover group a capture node learns who is active from the answer to its hello; a shard's
                // says which shard it is (SPEC.md 19.2).
                out.act(.reply(shortWelcome(to: [identity])))
            }
        case .worker:
            if workers[identity] != nil {
                workers[identity] = t
            } else if workers.count < limits.maxWorkers {
                out.log(.info, "worker joined", ["worker": String(hello.nodeID.prefix(64))])
                workers[identity] = t
            } else {
                out.count("workers_refused_cap")
                notice("workers_refused_cap", "worker not remembered: --max-workers reached (it is still answered)", [
                    "max": "\(limits.maxWorkers)",
                ], now, &out)
            }
            out.act(.reply(welcome(to: [identity])))
        case .tail, .view, .unspecified, .UNRECOGNIZED:
            out.act(.reply(welcome(to: [identity])))
        }
    }

    /// Hands one input to the table and publishes what it released. Returns false when the input was refused: an
    /// invalid stream id, a straggler of a replaced epoch, a message for an epoch that already ended, or a new
    /// stream beyond `--max-streams` (each counted).
    @discardableResult
    mutating func apply(
        _ input: StreamTable<FrameResult>.Input, stream: String, epoch: UInt64, now: Instant, _ out: inout CollectorOutput
    ) -> Bool {
        guard Wire.isValidStreamID(stream) else {
            out.count("invalid_stream")
            notice("invalid_stream", "message with an invalid stream id ignored", [:], now, &out)
            return false
        }
        let t = now.monotonicNs
        let key = Key(stream: stream, epoch: epoch)
        let before = table.buffer(key)?.counters ?? StreamCounters()
        let outcome = table.apply(input, stream: stream, epoch: epoch, at: t)
        // Late and duplicate results as they happen: the buffer's counters after this input, or the final ones if
        // it ended the stream.
        var after = table.buffer(key)?.counters
        for (emittedKey, emissions) in outcome.emissions where emittedKey == key {
            for case .end(let final, _) in emissions { after = final }
        }
        if let after {
            if after.late > before.late { out.count("results_late", after.late - before.late) }
            if after.duplicates > before.duplicates { out.count("results_duplicate", after.duplicates - before.duplicates) }
        }
        switch outcome.rejected {
        case .staleEpoch?:
            out.count("stale_epoch")
            return false
        case .afterEnd?:
            out.count("late_after_end")
            if case .result = input { out.count("results_late") }
            return false
        case .full?:
            out.count("streams_refused_cap")
            notice("streams_refused_cap", "new stream refused: --max-streams reached", [
                "stream": stream, "max": "\(limits.maxStreams)",
            ], now, &out)
            return false
        case nil: break
        }
        for old in outcome.replaced {
            out.log(.info, "new epoch replaces old", ["stream": stream, "old": "\(old.epoch)", "new": "\(epoch)"])
        }
        if let opened = outcome.opened {
            streams[opened] = StreamState(
                tracker: FaceTracker(configuration: tracking), statistics: StreamStatistics(now: t), lastInput: t,
                nextPublication: leaderEpoch == nil ? nil : 1)
        }
        streams[key]?.lastInput = t
        if leaderEpoch != nil {
            touched.insert(key)
            for old in outcome.replaced { touched.insert(old) }
        }
        for (key, emissions) in outcome.emissions {
            publish(emissions, key: key, now: now, &out)
        }
        return true
    }

    /// Restarts tracking on the named stream (every open stream for ""): each live track ends with a faceLeft
    /// event, then a `TrackingReset` marks the first frame tracked afresh. Returns the streams reset.
    private mutating func reset(stream: String, _ out: inout CollectorOutput) -> [String] {
        var names: Set<String> = []
        for key in table.openKeys where stream.isEmpty || key.stream == stream {
            guard var state = streams[key], let buffer = table.buffer(key) else { continue }
            let left = state.leftEvents(state.tracker.finish())
            state.pulse.removeAll()  // every track ended
            for event in left {
                out.act(.publish(state.message(key, .event(event), leaderEpoch: leaderEpoch ?? 0)))
            }
            var marker = TrackingReset()
            marker.seq = buffer.head
            marker.endedTracks = UInt32(clamping: left.count)
            out.act(.publish(state.message(key, .reset(marker), leaderEpoch: leaderEpoch ?? 0)))
            streams[key] = state
            if leaderEpoch != nil { touched.insert(key) }
            names.insert(key.stream)
            out.log(.info, "tracking reset", ["stream": key.stream, "epoch": "\(key.epoch)", "from": "\(marker.seq)", "ended": "\(left.count)"])
        }
        return names.sorted()
    }

    /// One `StreamStatistics` per open stream, and a log line with the same figures.
    private mutating func reportStatistics(_ now: UInt64, _ out: inout CollectorOutput) {
        let dispatch = broker.figures
        if dispatch.threads > 0 || dispatch.waitingNodes > 0 {
            // Which threads are out of dispatch, by name (the operator's first question about a slow cluster).
            out.log(.info, "dispatch statistics", [
                "threads": "\(dispatch.threads)", "idle": "\(dispatch.idle)", "assigned": "\(dispatch.assigned)",
                "ejected": "\(dispatch.ejected)", "waiting_captures": "\(dispatch.waitingNodes)",
                "ejected_threads": broker.ejectedNames().joined(separator: ","),
            ])
        }
        for key in table.openKeys {
            guard var state = streams[key], let buffer = table.buffer(key) else { continue }
            let report = state.statistics.report(now: now, late: buffer.counters.late, duplicates: buffer.counters.duplicates)
            out.log(.info, "stream statistics", [
                "stream": key.stream, "epoch": "\(key.epoch)", "window": "\(StreamStatistics.Report.format(report.seconds, 1)) s",
                "figures": "\(report)",
            ])
            out.act(.publish(state.message(key, .statistics(report.message(nextSeq: buffer.head)), leaderEpoch: leaderEpoch ?? 0)))
            streams[key] = state
            if leaderEpoch != nil { touched.insert(key) }
        }
    }
}
