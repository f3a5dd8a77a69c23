@_exported import FacewireCollectorCore
import CoreMetrics
import FacewireProtocol
import FacewireRuntime
import Foundation
import Logging
import ZeroMQ
import FacewireVocabulary

/// The collector's socket shell: it moves bytes between its ROUTER and PUB sockets and ``CollectorCore``, which
/// makes every decision, and carries out the core's outputs (publish, reply, count, log).
///
/// One thread owns both sockets; ``run(stop:ready:)`` blocks it until `stop` is set.
public final class CollectorNode: @unchecked Sendable {
    public let configuration: CollectorConfiguration
    public let counters = Counters()
    /// Beats every time the main loop goes round (`/healthz`).
    public let liveness = Liveness()
    private let latency = CoreMetrics.Timer(label: "facewire_collector_latency_seconds")
    private let pendingGauge = Gauge(label: "facewire_collector_pending_results")
    private let streamsGauge = Gauge(label: "facewire_collector_open_streams")
    private let workersGauge = Gauge(label: "facewire_collector_workers")
    private let capturesGauge = Gauge(label: "facewire_collector_captures")
    private let threadGauges = ["idle", "assigned", "ejected"].map { Gauge(label: "facewire_collector_dispatch_threads", dimensions: [("state", $0)]) }
    private let waitingGauge = Gauge(label: "facewire_collector_dispatch_waiting_captures")
    /// Bounded by the core (`--max-metric-streams` streams, 32 reason codes, 3 statuses).
    private var streamFrames: [CollectorAction.FrameCount: CoreMetrics.Counter] = [:]
    let logger: Logger
    let context = ZMQContext()
    var core: CollectorCore
    /// Called with every message of the ordered stream, in order, before it is published (the `--output` file).
    /// An error is logged and counted (`output_failed`); the stream goes on.
    private let sink: ((StreamMessage) throws -> Void)?
    /// The role the election last gave (set from the election's task, read by the loop); nil without `--election`.
    public let role: RoleBox?
    /// The failover part of the loop (replication), with `--election`.
    var failover: FailoverShell?
    /// What the core published in the current step: handed to replication (which publishes it once the standbys have
    /// it) while active in a failover group, published at once otherwise.
    var stepPublications: [StreamMessage] = []

    public init(
        configuration: CollectorConfiguration, logger: Logger, role: RoleBox? = nil, sink: ((StreamMessage) throws -> Void)? = nil
    ) {
        self.configuration = configuration
        self.logger = logger
        self.sink = sink
        self.role = role
        core = CollectorCore(limits: configuration.limits, tracking: configuration.tracking)
        if role != nil { core.announcement = .init(role: .standby) }
        core.shard = configuration.shard
    }


    public func run(stop: StopToken, ready: (@Sendable (String, String) -> Void)? = nil) throws {
        stop.onStop { [context] in context.shutdown() }
        var zap: ZAPAuthenticator?
        if let security = configuration.security {
            // In a failover group the collectors share one key pair: a standby's replication link connects with it.
            let allowed = security.allowedClients.union(role == nil ? [] : [security.keyPair.publicKey])
            zap = try ZAPAuthenticator(context: context, allowed: allowed) { [counters, logger] decision in
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
        // Welcomes, reset replies and assignments go out: a peer that never reads holds at most 256 (a capture node may
        // be sent up to 64 assignments in one go; one lost is released when its thread says Idle).
        try router.setHighWaterMarks(send: 256, receive: 100_000)
        try publisher.setHighWaterMarks(send: 100_000)
        let control = try router.bind(configuration.bind)
        core.publishEndpoint = try publisher.bind(configuration.publish)
        if let role, let settings = configuration.failover {
            failover = try FailoverShell(
                settings: settings, role: role, context: context, security: configuration.security, control: control,
                publish: core.publishEndpoint, limits: configuration.limits, tracking: configuration.tracking, logger: logger)
        }
        defer { failover?.close() }
        logger.info("collector listening", metadata: [
            "control": "\(control)", "publish": "\(core.publishEndpoint)", "replication": "\(failover?.replicationEndpoint ?? "-")",
        ])
        ready?(control, core.publishEndpoint)

        var lastHeartbeat: UInt64 = 0
        var lastGauges: UInt64 = 0
        while !stop.isStopped {
            let now = Clock.monotonicNanoseconds()
            if now &- lastGauges >= 1_000_000_000 {
                let gauges = core.gauges(at: now)
                pendingGauge.record(gauges.pending)
                streamsGauge.record(gauges.streams)
                workersGauge.record(gauges.workers)
                capturesGauge.record(gauges.captures)
                let dispatch = gauges.dispatch
                for (gauge, value) in zip(threadGauges, [dispatch.idle, dispatch.assigned, dispatch.ejected]) { gauge.record(value) }
                waitingGauge.record(dispatch.waitingNodes)
                liveness.beat(
                    "\(gauges.streams) open streams, \(gauges.workers) workers, \(gauges.captures) capture nodes, \(gauges.pending) results pending, "
                        + "\(dispatch.threads) threads (\(dispatch.ejected) ejected)")
                lastGauges = now
            }
            if now &- lastHeartbeat >= 200_000_000 {
                // An empty message on the empty topic: lets subscribers know their subscription is live.
                _ = try? publisher.send(StreamMessage(stream: "", epoch: 0, body: nil).parts(), dontWait: true)
                lastHeartbeat = now
            }
            failover?.applyRole(node: self, router: router, publisher: publisher)
            var timeout = failover == nil ? 100 : 20
            if let deadline = core.nextDeadline {
                timeout = deadline <= now ? 0 : min(timeout, Int(clamping: (deadline - now) / 1_000_000) + 1)
            }
            do {
                let ready = try ZMQSocket.poll([router] + (failover?.sockets ?? []), timeoutMilliseconds: timeout)
                if ready[0] {
                    // Drain what is queued, then tick once.
                    var budget = 1000
                    while budget > 0, let message = try router.receiveMessage(dontWait: true) {
                        carryOut(intake(message), router: router, publisher: publisher)
                        budget -= 1
                    }
                }
                if let failover, ready.dropFirst().contains(true) {
                    try failover.receive(node: self, publisher: publisher)
                }
            } catch let error as ZMQError where error.isTerminated {
                break
            }
            carryOut(core.tick(at: Clock.now()), router: router, publisher: publisher)
            finishStep(publisher: publisher)
            failover?.tick(node: self, publisher: publisher)
        }
        logger.info("collector stopped", metadata: ["counters": "\(counters.summary)"])
    }

    /// Decodes one ROUTER message and hands it to the core.
    private func intake(_ message: ZMQSocket.Message) -> CollectorOutput {
        guard message.parts.count == 2 else { return core.malformed(code: "parts", at: Clock.now()) }
        do {
            let envelope = try Envelope(part: message.parts[1])
            return core.handle(envelope, from: message.parts[0], peerAddress: message.peerAddress, at: Clock.now())
        } catch {
            return core.malformed(code: (error as? ProtocolError)?.code.description ?? "malformed", at: Clock.now())
        }
    }

    /// Does what the core decided: counts and logs, then its actions in the order it decided them.
    func carryOut(_ output: CollectorOutput, router: ZMQSocket, publisher: ZMQSocket) {
        counters.add(output.counts)
        logger.write(output.logs)
        for action in output.actions {
            switch action {
            case .frames(let frame): countFrames(frame)
            case .latency(let nanoseconds): latency.recordNanoseconds(nanoseconds)
            case .publish(let message):
                if failover?.isReplicating == true {
                    stepPublications.append(message)
                } else {
                    publish(message, bytes: nil, on: publisher)
                }
            case .reply(let reply): send(reply, on: router, publisher: publisher)
            }
        }
    }

    private func countFrames(_ frame: CollectorAction.FrameCount) {
        var key = frame
        key.count = 0
        let counter = streamFrames[key] ?? {
            let made = CoreMetrics.Counter(
                label: "facewire_stream_frames_total", dimensions: [("stream", frame.stream), ("status", frame.status), ("reason", frame.reason)])
            streamFrames[key] = made
            return made
        }()
        counter.increment(by: Int64(clamping: frame.count))
    }

    /// Ends a step of the loop: while active in a failover group, what the core published and the streams it changed go
    /// to replication (which publishes once the standbys have them). Without failover everything went out at once.
    func finishStep(publisher: ZMQSocket) {
        guard let failover, failover.isReplicating else { return }
        failover.step(node: self, publisher: publisher)
        stepPublications.removeAll(keepingCapacity: true)
    }

    /// Publishes one message of the ordered stream (its bytes, when already serialised) and writes it to the sink.
    func publish(_ message: StreamMessage, bytes: [UInt8]?, on publisher: ZMQSocket) {
        if let sink {
            do {
                try sink(message)
            } catch {
                counters.add("output_failed")
                logger.error("cannot write the output file", metadata: ["error": "\(error)"])
            }
        }
        do {
            if let bytes {
                try publisher.send([Wire.topic(forStream: message.stream), bytes], dontWait: true)
            } else {
                try publisher.send(try message.parts(), dontWait: true)
            }
        } catch {
            counters.add("publish_failed")
        }
    }

    private func send(_ reply: CollectorAction.Reply, on router: ZMQSocket, publisher: ZMQSocket) {
        guard let bytes: [UInt8] = reply.bytes ?? (try? reply.envelope.serializedBytes()) else { return }
        for identity in reply.identities {
            do {
                if try !router.send([identity, bytes], dontWait: true) { counters.add(reply.lostCounter) }
            } catch {
                // EHOSTUNREACH: the peer is gone. An undelivered Assignment frees its thread, which may be assigned
                // again at once (to another node: this one is forgotten, so this recursion ends).
                counters.add(reply.lostCounter)
                carryOut(core.replyUndeliverable(reply, to: identity, at: Clock.now()), router: router, publisher: publisher)
            }
        }
    }
}
