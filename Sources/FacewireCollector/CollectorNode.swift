import CoreMetrics
import FacewireProtocol
import FacewireRuntime
import Foundation
import Logging
import ZeroMQ

/// The collector: the one stable address of a cluster. It tells workers where capture nodes are, merges
/// each stream's results in frame order, gives up on frames that do not come back in time (emitting them as
/// dropped), assigns tracking IDs and publishes the ordered stream.
///
/// One thread owns both sockets; ``run(stop:)`` blocks it until `stop` is set.
public final class CollectorNode: @unchecked Sendable {
    public let configuration: CollectorConfiguration
    public let counters = Counters()
    /// Beats every time the main loop goes round (`/healthz`).
    public let liveness = Liveness()
    /// Metrics beyond the counters (created at init: bootstrap metrics before creating the node).
    private let latency = CoreMetrics.Timer(label: "facewire_collector_latency_seconds")
    private let pendingGauge = Gauge(label: "facewire_collector_pending_results")
    private let streamsGauge = Gauge(label: "facewire_collector_open_streams")
    private let workersGauge = Gauge(label: "facewire_collector_workers")
    private let capturesGauge = Gauge(label: "facewire_collector_captures")
    private var streamFrames: [String: CoreMetrics.Counter] = [:]
    private let logger: Logger
    private let context = ZMQContext()

    private typealias StreamKey = StreamTable<FrameResult>.Key

    /// What the collector keeps per open (stream, epoch) beside the table's reorder buffer.
    private struct StreamState {
        var tracker: FaceTracker
        var statistics: StreamStatistics
        /// Frames emitted with a worker's own status (the buffer counts them all as processed).
        var workerDropped: UInt64 = 0
        var errors: UInt64 = 0
    }

    private struct CaptureEntry {
        var info: CaptureInfo
        var lastHello: UInt64
    }

    /// The reorder buffers and the epoch rules.
    private var table: StreamTable<FrameResult>
    /// Tracking and statistics of each open key of `table`.
    private var streams: [StreamKey: StreamState] = [:]
    private var captures: [String: CaptureEntry] = [:]
    /// Workers that said hello recently, by ROUTER identity, with the time of their last hello.
    private var workers: [[UInt8]: UInt64] = [:]
    private var publishEndpoint = ""

    /// Called with every message of the ordered stream, in order, on the collector's thread, before it is
    /// published (the `--output` file). An error is logged and counted (`output_failed`); the stream goes on.
    private let sink: ((StreamMessage) throws -> Void)?

    public init(configuration: CollectorConfiguration, logger: Logger, sink: ((StreamMessage) throws -> Void)? = nil) {
        self.configuration = configuration
        self.logger = logger
        self.sink = sink
        table = StreamTable(
            maxDelayNanoseconds: UInt64(max(0, configuration.maxDelayMilliseconds)) * 1_000_000,
            maxPending: configuration.maxPending)
    }

    public func run(stop: StopToken, ready: (@Sendable (String, String) -> Void)? = nil) throws {
        stop.onStop { [context] in context.shutdown() }
        var zap: ZAPAuthenticator?
        if let security = configuration.security {
            zap = try ZAPAuthenticator(context: context, allowed: security.allowedClients) { [counters, logger] decision in
                counters.add(decision.accepted ? "zap_accepted" : "zap_denied")
                if decision.isFirstRefusal {
                    logger.warning("refused a peer whose key is not allowed", metadata: ["key": "\(decision.key)", "address": "\(decision.address)"])
                }
            }
        }
        defer { withExtendedLifetime(zap) {} }
        let router = try ZMQSocket(context: context, kind: .router)
        let publisher = try ZMQSocket(context: context, kind: .pub)
        if let secret = configuration.security?.keyPair.secretKey {
            try router.makeCurveServer(secretKey: secret)
            try publisher.makeCurveServer(secretKey: secret)
        }
        defer {
            router.close()
            publisher.close()
        }
        try router.setMaxMessageSize(Wire.maxControlMessageBytes)
        try router.setRouterMandatory(true)
        try router.setHighWaterMarks(send: 1000, receive: 100_000)
        try publisher.setHighWaterMarks(send: 100_000)
        let control = try router.bind(configuration.bind)
        publishEndpoint = try publisher.bind(configuration.publish)
        logger.info("collector listening", metadata: ["control": "\(control)", "publish": "\(publishEndpoint)"])
        ready?(control, publishEndpoint)

        var lastHeartbeat: UInt64 = 0
        var lastStatistics = Clock.monotonicNanoseconds()
        let statisticsInterval = UInt64(max(0, configuration.statisticsIntervalSeconds) * 1e9)
        var lastGauges: UInt64 = 0
        while !stop.isStopped {
            let now = Clock.monotonicNanoseconds()
            if now - lastGauges >= 1_000_000_000 {
                updateGauges(now: now)
                lastGauges = now
            }
            if statisticsInterval > 0, now - lastStatistics >= statisticsInterval {
                reportStatistics(now: now, publisher: publisher)
                lastStatistics = now
            }
            if now - lastHeartbeat >= 200_000_000 {
                // An empty message on the empty topic: lets subscribers know their subscription is live.
                _ = try? publisher.send(StreamMessage(stream: "", epoch: 0, body: nil).parts(), dontWait: true)
                lastHeartbeat = now
            }
            var timeout = 100
            if let deadline = table.nextDeadline {
                timeout = deadline <= now ? 0 : min(timeout, Int((deadline - now) / 1_000_000) + 1)
            }
            do {
                if try router.waitForInput(timeoutMilliseconds: timeout) {
                    // Drain what is queued, then tick the buffers once.
                    var budget = 1000
                    while budget > 0, let message = try router.receiveMessage(dontWait: true) {
                        handle(message, router: router, publisher: publisher)
                        budget -= 1
                    }
                }
            } catch let error as ZMQError where error.isTerminated {
                break
            }
            for (key, emissions) in table.tick(at: Clock.monotonicNanoseconds()) {
                publish(emissions, key: key, publisher: publisher)
            }
        }
        logger.info("collector stopped", metadata: ["counters": "\(counters.summary)"])
    }

    private func updateGauges(now: UInt64) {
        let keys = table.openKeys
        let pending = keys.reduce(0) { $0 + (table.buffer($1)?.pendingCount ?? 0) }
        let expiry = UInt64(configuration.captureExpirySeconds * 1e9)
        let liveCaptures = captures.values.filter { now - $0.lastHello < expiry }.count
        pendingGauge.record(pending)
        streamsGauge.record(keys.count)
        workersGauge.record(workers.count)
        capturesGauge.record(liveCaptures)
        liveness.beat("\(keys.count) open streams, \(workers.count) workers, \(liveCaptures) capture nodes, \(pending) results pending")
    }

    /// Counts an emitted frame per stream, status and reason (`facewire_stream_frames_total`).
    private func countFrame(stream: String, status: String, reason: String, count: UInt64 = 1) {
        let code = reason.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        let key = "\(stream)\u{0}\(status)\u{0}\(code)"
        let counter = streamFrames[key] ?? {
            let made = CoreMetrics.Counter(
                label: "facewire_stream_frames_total", dimensions: [("stream", stream), ("status", status), ("reason", code)])
            streamFrames[key] = made
            return made
        }()
        counter.increment(by: Int64(clamping: count))
    }

    /// Logs one line per open stream with what it did since the last report, and publishes the same figures in
    /// the stream (a `StreamStatistics` message between two frames).
    private func reportStatistics(now: UInt64, publisher: ZMQSocket) {
        var messages: [StreamMessage] = []
        for key in table.openKeys {
            guard var state = streams[key], let buffer = table.buffer(key) else { continue }
            let report = state.statistics.report(now: now, late: buffer.counters.late, duplicates: buffer.counters.duplicates)
            streams[key] = state
            logger.info("stream statistics", metadata: [
                "stream": "\(key.stream)", "epoch": "\(key.epoch)", "window": "\(StreamStatistics.Report.format(report.seconds, 1)) s",
                "figures": "\(report)",
            ])
            messages.append(
                StreamMessage(stream: key.stream, epoch: key.epoch, body: .statistics(report.message(nextSeq: buffer.head))))
        }
        emit(messages, publisher: publisher)
    }

    /// Restarts tracking on the named stream (every open stream for ""): each live track ends with a faceLeft
    /// event, then a `TrackingReset` marks the first frame tracked afresh. Returns the streams reset.
    private func reset(stream: String, publisher: ZMQSocket) -> [String] {
        var messages: [StreamMessage] = []
        var names: Set<String> = []
        for key in table.openKeys where stream.isEmpty || key.stream == stream {
            guard var state = streams[key], let buffer = table.buffer(key) else { continue }
            let left = state.tracker.finish()
            streams[key] = state
            for track in left {
                messages.append(StreamMessage(stream: key.stream, epoch: key.epoch, body: .event(Self.faceEvent(.left, track))))
            }
            var marker = TrackingReset()
            marker.seq = buffer.head
            marker.endedTracks = UInt32(clamping: left.count)
            messages.append(StreamMessage(stream: key.stream, epoch: key.epoch, body: .reset(marker)))
            names.insert(key.stream)
            logger.info("tracking reset", metadata: ["stream": "\(key.stream)", "epoch": "\(key.epoch)", "from": "\(marker.seq)", "ended": "\(left.count)"])
        }
        emit(messages, publisher: publisher)
        return names.sorted()
    }

    // MARK: - Intake

    private func handle(_ message: ZMQSocket.Message, router: ZMQSocket, publisher: ZMQSocket) {
        guard message.parts.count == 2 else {
            counters.add("control_malformed")
            counters.add("control_rejected_parts")
            return
        }
        let identity = message.parts[0]
        let envelope: Envelope
        do {
            envelope = try Envelope(part: message.parts[1])
        } catch {
            counters.add("control_malformed")
            counters.add("control_rejected_\((error as? ProtocolError)?.code.description ?? "malformed")")
            logger.warning("malformed control message", metadata: ["error": "\(error)"])
            return
        }
        let now = Clock.monotonicNanoseconds()
        switch envelope.body {
        case .hello(let hello):
            handleHello(hello, identity: identity, peerAddress: message.peerAddress, router: router, publisher: publisher, now: now)
        case .result(let result):
            counters.add("results")
            if let rejection = ResultValidation.rejection(of: result, wallMicroseconds: Clock.wallMicroseconds()) {
                counters.add("results_rejected_\(rejection.rawValue)")
                return
            }
            apply(.result(seq: result.seq, payload: result), stream: result.stream, epoch: result.epoch, publisher: publisher, now: now)
        case .skipped(let skipped):
            guard skipped.count > 0 else { return }
            counters.add("skipped", skipped.count)
            apply(
                .skip(firstSeq: skipped.firstSeq, count: skipped.count, reason: DropReason(skipped.reason)),
                stream: skipped.stream, epoch: skipped.epoch, publisher: publisher, now: now)
        case .end(let end):
            logger.info("stream ended at the source", metadata: ["stream": "\(end.stream)", "frames": "\(end.nextSeq)"])
            apply(.end(nextSeq: end.nextSeq), stream: end.stream, epoch: end.epoch, publisher: publisher, now: now)
        case .reset(let request):
            guard request.requestID.utf8.count <= 64, request.stream.isEmpty || Wire.isValidStreamID(request.stream) else {
                counters.add("control_malformed")
                logger.warning("invalid reset request", metadata: ["stream": "\(request.stream.prefix(80))"])
                return
            }
            counters.add("resets")
            var reply = ResetReply()
            reply.requestID = request.requestID
            reply.streams = reset(stream: request.stream, publisher: publisher)
            do {
                if try !router.send([identity, try Envelope(.resetReply(reply)).serializedBytes()], dontWait: true) {
                    counters.add("reply_lost")
                }
            } catch {
                counters.add("reply_lost")
            }
        case .welcome, .resetReply, .none:
            counters.add("control_unexpected")
        }
    }

    private func handleHello(
        _ hello: Hello, identity: [UInt8], peerAddress: String?, router: ZMQSocket, publisher: ZMQSocket, now: UInt64
    ) {
        switch hello.role {
        case .capture:
            guard apply(.hello(nextSeq: hello.nextSeq), stream: hello.stream, epoch: hello.epoch, publisher: publisher, now: now)
            else { return }
            var info = CaptureInfo()
            info.stream = hello.stream
            info.epoch = hello.epoch
            info.frameEndpoint = Endpoint.resolvingWildcard(hello.frameEndpoint, host: peerAddress ?? "127.0.0.1")
            info.curvePublicKey = hello.curvePublicKey
            let isNew = captures[hello.stream]?.info != info
            captures[hello.stream] = CaptureEntry(info: info, lastHello: now)
            if isNew {
                logger.info("capture announced", metadata: ["stream": "\(info.stream)", "endpoint": "\(info.frameEndpoint)"])
                // Tell every live worker at once instead of waiting for its next hello.
                for worker in workers.keys { sendWelcome(to: worker, router: router, now: now) }
            }
        case .worker:
            if workers[identity] == nil {
                logger.info("worker joined", metadata: ["worker": "\(hello.nodeID)"])
            }
            workers[identity] = now
            sendWelcome(to: identity, router: router, now: now)
        case .tail, .unspecified, .UNRECOGNIZED:
            sendWelcome(to: identity, router: router, now: now)
        }
        // Forget workers that stopped saying hello.
        workers = workers.filter { now - $0.value < 10_000_000_000 }
    }

    private func sendWelcome(to identity: [UInt8], router: ZMQSocket, now: UInt64) {
        var welcome = Welcome()
        let expiry = UInt64(configuration.captureExpirySeconds * 1e9)
        welcome.captures = captures.values.filter { now - $0.lastHello < expiry }.map(\.info)
        welcome.publishEndpoint = publishEndpoint
        do {
            if try !router.send([identity, try Envelope(.welcome(welcome)).serializedBytes()], dontWait: true) {
                counters.add("welcome_lost")
            }
        } catch {
            // EHOSTUNREACH: the peer is gone.
            counters.add("welcome_lost")
            workers[identity] = nil
        }
    }

    /// Hands one input to the table and publishes what it released. Returns false when the input was refused: an
    /// invalid stream id, a straggler of a replaced epoch, or a message for an epoch that already ended (counted).
    @discardableResult
    private func apply(
        _ input: StreamTable<FrameResult>.Input, stream: String, epoch: UInt64, publisher: ZMQSocket, now: UInt64
    ) -> Bool {
        guard Wire.isValidStreamID(stream) else {
            counters.add("invalid_stream")
            return false
        }
        let key = StreamKey(stream: stream, epoch: epoch)
        let before = table.buffer(key)?.counters ?? StreamCounters()
        let outcome = table.apply(input, stream: stream, epoch: epoch, at: now)
        // Late and duplicate results as they happen (`results_late_total`, `results_duplicate_total`): the buffer's
        // counters after this input, or the final ones if it ended the stream.
        var after = table.buffer(key)?.counters
        for (emittedKey, emissions) in outcome.emissions where emittedKey == key {
            for case .end(let final) in emissions { after = final }
        }
        if let after {
            if after.late > before.late { counters.add("results_late", after.late - before.late) }
            if after.duplicates > before.duplicates { counters.add("results_duplicate", after.duplicates - before.duplicates) }
        }
        switch outcome.rejected {
        case .staleEpoch?:
            counters.add("stale_epoch")
            return false
        case .afterEnd?:
            counters.add("late_after_end")
            if case .result = input { counters.add("results_late") }
            return false
        case nil: break
        }
        for old in outcome.replaced {
            logger.info("new epoch replaces old", metadata: ["stream": "\(stream)", "old": "\(old.epoch)", "new": "\(epoch)"])
        }
        if let opened = outcome.opened {
            streams[opened] = StreamState(
                tracker: FaceTracker(configuration: configuration.tracking), statistics: StreamStatistics(now: now))
        }
        for (key, emissions) in outcome.emissions {
            publish(emissions, key: key, publisher: publisher)
        }
        return true
    }

    // MARK: - Output

    /// The time the tracker sees for a frame: its capture time in seconds, or (when the capture node sent none)
    /// its sequence number at a nominal 30 frames per second.
    static func trackingTime(_ result: FrameResult) -> Double {
        result.captureTimeUs != 0 ? Double(result.captureTimeUs) / 1e6 : Double(result.seq) / 30
    }

    private func publish(_ emissions: [ReorderBuffer<FrameResult>.Emission], key: StreamKey, publisher: ZMQSocket) {
        guard !emissions.isEmpty, var state = streams[key] else { return }
        var messages: [StreamMessage] = []
        func event(_ kind: FaceEvent.Kind, _ track: TrackEvent) {
            messages.append(StreamMessage(stream: key.stream, epoch: key.epoch, body: .event(Self.faceEvent(kind, track))))
        }
        var finished = false
        for emission in emissions {
            switch emission {
            case .frame(_, var result):
                // Only frames a worker analysed tell the tracker anything; the rest just lengthen its next step.
                var update = TrackUpdate(assignments: [], appeared: [], left: [])
                if result.status == .processed {
                    update = state.tracker.update(
                        seq: result.seq, time: Self.trackingTime(result),
                        detections: result.faces.map {
                            TrackDetection(
                                box: TrackBox(x: $0.bounds.x, y: $0.bounds.y, width: $0.bounds.width, height: $0.bounds.height),
                                score: $0.confidence)
                        })
                }
                for (index, assignment) in update.assignments.enumerated() where index < result.faces.count {
                    result.faces[index].trackingID = assignment.trackingID
                    result.faces[index].trackingFrameCount = assignment.frameCount
                }
                if result.captureTimeUs != 0 {
                    // Saturating: the capture time was checked at intake, but arithmetic on wire values never traps.
                    let (age, overflow) = Clock.wallMicroseconds().subtractingReportingOverflow(result.captureTimeUs)
                    result.timings.totalMs = overflow ? .infinity : Float(age) / 1000
                }
                switch result.status {
                case .processed: counters.add("frames_processed")
                case .dropped:
                    counters.add("frames_dropped")
                    state.workerDropped += 1
                default:
                    counters.add("frames_failed")
                    state.errors += 1
                }
                state.statistics.record(
                    processed: result.status == .processed, reason: result.reason,
                    latencyMilliseconds: result.captureTimeUs != 0 ? Double(result.timings.totalMs) : nil)
                countFrame(
                    stream: key.stream, status: result.status == .processed ? "processed" : result.status == .dropped ? "dropped" : "error",
                    reason: result.reason)
                let totalMs = Double(result.timings.totalMs)
                // Int64(Double) traps on inf, NaN and out of range: only plausible latencies (under a day) are recorded.
                if result.status == .processed, result.captureTimeUs != 0, totalMs.isFinite, totalMs >= 0, totalMs < 86_400_000 {
                    latency.recordNanoseconds(Int64(totalMs * 1e6))
                }
                messages.append(StreamMessage(stream: key.stream, epoch: key.epoch, body: .frame(result)))
                update.left.forEach { event(.left, $0) }
                update.appeared.forEach { event(.appeared, $0) }
            case .dropped(let seqs, let reason):
                // O(1) whatever the run's length: a short run is published frame by frame, a run longer than
                // --max-pending as one message with `runLength` (SPEC.md 9.1).
                let length = seqs.upperBound - seqs.lowerBound
                var result = FrameResult()
                result.stream = key.stream
                result.epoch = key.epoch
                result.status = .dropped
                result.reason = reason.rawValue
                counters.add("frames_dropped", length)
                state.statistics.record(processed: false, reason: reason.rawValue, latencyMilliseconds: nil, count: length)
                countFrame(stream: key.stream, status: "dropped", reason: reason.rawValue, count: length)
                if length <= UInt64(max(1, configuration.maxPending)) {
                    for seq in seqs {
                        result.seq = seq
                        messages.append(StreamMessage(stream: key.stream, epoch: key.epoch, body: .frame(result)))
                    }
                } else {
                    result.seq = seqs.lowerBound
                    result.runLength = length
                    messages.append(StreamMessage(stream: key.stream, epoch: key.epoch, body: .frame(result)))
                }
            case .end(let streamCounters):
                state.tracker.finish().forEach { event(.left, $0) }
                var summary = StreamSummary()
                summary.frames = streamCounters.emitted
                // The buffer counts every result it emitted as processed; split off the workers' own verdicts.
                summary.processed = streamCounters.processed - state.workerDropped - state.errors
                summary.dropped = streamCounters.dropped + state.workerDropped
                summary.errors = state.errors
                summary.late = streamCounters.late
                summary.duplicates = streamCounters.duplicates
                messages.append(StreamMessage(stream: key.stream, epoch: key.epoch, body: .end(summary)))
                logger.info("stream finished", metadata: [
                    "stream": "\(key.stream)", "frames": "\(summary.frames)", "processed": "\(summary.processed)",
                    "dropped": "\(summary.dropped)", "errors": "\(summary.errors)", "late": "\(summary.late)",
                ])
                finished = true
            }
        }
        if finished {
            streams[key] = nil
        } else {
            streams[key] = state
        }
        emit(messages, publisher: publisher)
    }

    static func faceEvent(_ kind: FaceEvent.Kind, _ track: TrackEvent) -> FaceEvent {
        var event = FaceEvent()
        event.kind = kind
        event.trackingID = track.trackingID
        event.seq = track.seq
        event.trackingFrameCount = track.frameCount
        return event
    }

    /// Hands messages of the ordered stream to the sink (the `--output` file), then publishes them.
    private func emit(_ messages: [StreamMessage], publisher: ZMQSocket) {
        for message in messages {
            if let sink {
                do {
                    try sink(message)
                } catch {
                    counters.add("output_failed")
                    logger.error("cannot write the output file", metadata: ["error": "\(error)"])
                }
            }
            do {
                try publisher.send(try message.parts(), dontWait: true)
            } catch {
                counters.add("publish_failed")
            }
        }
    }
}

extension StreamStatistics.Report {
    /// The report as the results stream carries it, with the stream's next sequence.
    public func message(nextSeq: UInt64) -> StreamStatisticsMessage {
        var message = StreamStatisticsMessage()
        message.windowSeconds = Float(seconds)
        message.frames = UInt64(frames)
        message.processed = UInt64(processed)
        message.dropped = dropped.sorted { $0.key < $1.key }.map {
            var count = DropCount()
            count.reason = $0.key
            count.count = UInt64($0.value)
            return count
        }
        message.late = late
        message.duplicates = duplicates
        message.fps = Float(fps)
        if let latencyP50 { message.latencyP50Ms = Float(latencyP50) }
        if let latencyP99 { message.latencyP99Ms = Float(latencyP99) }
        message.nextSeq = nextSeq
        return message
    }
}
