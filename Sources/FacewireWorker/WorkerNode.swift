import FacewireDetection
import CoreMetrics
import FacewireProtocol
import FacewireRuntime
import FacewireTransport
import Foundation
import Logging
import ZeroMQ
import FacewireWorkerCore
import FacewireVocabulary

/// A stateless detector worker: pulls frames from every capture node it knows, returns one result per frame
/// to the collector.
///
/// Each detection thread owns one DEALER per capture node, one DEALER to the collector and its own detector.
/// It attaches to every capture node (``Ready``) and tells the collector when it is idle (``Idle``); the collector
/// assigns it to a capture node with a frame waiting, which sends it that frame (dispatch protocol 2, SPEC 3). So a
/// thread holds at most one frame, and frames never wait behind another frame at a worker. A control thread says
/// hello to the collector and learns capture endpoints from its answers.
///
/// With shards (`--collector a;b`, SPEC.md 19) each detection thread serves one shard: its Idle and results go to that
/// shard's collector, and it attaches to the capture nodes that shard announces. A control thread per shard.
public final class WorkerNode: @unchecked Sendable {
    public let configuration: WorkerConfiguration
    public let counters = Counters()
    private let logger: Logger
    private let context = ZMQContext()
    /// The shards (one unless `--collector` lists several, separated by `;`), each with what the threads serving it
    /// share.
    private let shards: [Shard]
    /// Detection thread t serves shard `threadShards[t]`.
    private let threadShards: [Int]
    /// Beats every time the control loop goes round (`/healthz`).
    public let liveness = Liveness()
    /// Which detection threads are up; part of `/healthz`.
    public let supervision: DetectionSupervision
    /// Histograms of each processed frame's stages (created at init: bootstrap metrics before creating the node).
    private let decodeTimer = CoreMetrics.Timer(label: "facewire_worker_decode_seconds")
    private let detectTimer = CoreMetrics.Timer(label: "facewire_worker_detect_seconds")
    private let classifyTimer = CoreMetrics.Timer(label: "facewire_worker_classify_seconds")
    private let queueTimer = CoreMetrics.Timer(label: "facewire_worker_queue_seconds")
    private let capturesGauge = Gauge(label: "facewire_worker_captures")

    public init(configuration: WorkerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.supervision = DetectionSupervision(threads: max(1, configuration.threads))
        let map = try? ShardMap(parsing: configuration.collector)
        let groups = map?.groups ?? [[configuration.collector]]
        shards = groups.enumerated().map { index, endpoints in
            Shard(
                index: index, count: groups.count, collector: endpoints.joined(separator: ","),
                choice: SharedCollectorChoice(endpoints: endpoints),
                directory: CaptureDirectory(
                    configuration.captures, key: configuration.staticCaptureKey, maxEntries: configuration.maxCaptures,
                    requiresKey: configuration.security != nil))
        }
        threadShards = (0..<max(1, configuration.threads)).map {
            ShardMap.shard(ofThread: $0, worker: configuration.workerID, shards: groups.count)
        }
    }

    /// One shard's collectors (a failover group), which of them is active (the control session moves it, the
    /// threads' results follow), and the capture nodes it announced.
    private struct Shard {
        let index: Int
        let count: Int
        /// Its endpoints, comma-separated.
        let collector: String
        let choice: SharedCollectorChoice
        let directory: CaptureDirectory

        /// "shard k/N: " in logs of a sharded worker, "" otherwise.
        var label: String { count > 1 ? "shard \(index)/\(count): " : "" }
    }

    /// The capture nodes known, over every shard.
    private var capturesKnown: Int { shards.reduce(0) { $0 + $1.directory.count } }

    /// Runs until `stop` is set. Detector set-up errors (a missing model) are thrown before any thread starts: the
    /// first thread's analyzer is built here; the others build theirs on their own thread.
    ///
    /// Detection threads are supervised: one that dies (its loop throws, or its analyzer cannot be built) is marked
    /// down (`/healthz` unhealthy), counted (`detection_thread_restarts`) and restarted with a fresh analyzer after a
    /// back-off (``DetectionSupervision``).
    public func run(stop: StopToken) throws {
        setOpenCVThreads(1)
        let count = max(1, configuration.threads)
        let factory = analyzerFactory
        // Build the first thread's analyzer now, so a bad model fails the command instead of a thread.
        let first = UncheckedBox(try factory(0))
        // No context shutdown on stop: every wait below wakes within 200 ms, and a stopping worker first finishes
        // the frame in hand and any frame already delivered to it, so that no frame it accepted is lost.
        let threads = NodeThreads()
        for shard in shards {
            threads.spawn(shards.count > 1 ? "control-\(shard.index)" : "control") { [self] in try controlLoop(shard: shard, stop: stop) }
        }
        if shards.count > 1 {
            let served = Set(threadShards)
            logger.info("threads per shard", metadata: [
                "shards": "\(shards.count)",
                "threads": "\(shards.indices.map { k in threadShards.filter { $0 == k }.count })",
            ])
            if served.count < shards.count {
                logger.warning("fewer threads than shards: some shards get no thread from this worker (other workers' threads start elsewhere)", metadata: [
                    "unserved": "\(shards.indices.filter { !served.contains($0) })",
                ])
            }
        }
        for index in 0..<count {
            threads.spawn("detect-\(index)") { [self] in
                supervisedDetection(index: index, initial: index == 0 ? first.value : nil, factory: factory, stop: stop)
            }
        }
        logger.info("worker running", metadata: ["threads": "\(count)", "collector": "\(configuration.collector)", "shards": "\(shards.count)"])
        let failures = threads.join()
        logger.info("worker stopped", metadata: ["counters": "\(counters.summary)"])
        // The last results may still be queued: deliver them (within the results linger) before the process exits.
        context.terminate()
        if let failure = failures.first, !stop.isStopped { throw NodeError(failure) }
    }

    /// Builds a thread's analyzer: ``WorkerConfiguration/analyzerFactory`` or the configured detector.
    private var analyzerFactory: WorkerConfiguration.AnalyzerFactory {
        if let factory = configuration.analyzerFactory { return factory }
        let (detector, attributes) = (configuration.detector, configuration.attributes)
        return { _ in try FrameAnalyzer(detector: try makeFaceDetector(detector), attributes: try makeAttributeMeasurer(attributes)) }
    }

    /// Runs detection thread `index` until `stop`, restarting it (fresh analyzer, after a back-off) whenever it dies.
    private func supervisedDetection(
        index: Int, initial: FrameAnalyzer?, factory: WorkerConfiguration.AnalyzerFactory, stop: StopToken
    ) {
        var analyzer = initial
        while !stop.isStopped {
            do {
                let current = try analyzer ?? factory(index)
                analyzer = nil
                supervision.started(index, at: Clock.monotonicNanoseconds())
                try detectionLoop(index: index, analyzer: current, stop: stop)
                return
            } catch {
                analyzer = nil
                if stop.isStopped { return }
                let backoff = supervision.died(index, at: Clock.monotonicNanoseconds())
                counters.add("detection_thread_restarts")
                logger.error(
                    "detection thread died; restarting it",
                    metadata: ["thread": "\(index)", "error": "\(error)", "in": "\(backoff) s", "restarts": "\(supervision.restarts)"])
                stop.sleep(seconds: backoff)
            }
        }
    }

    // MARK: - Control: hello / welcome with the collector

    private func controlLoop(shard: Shard, stop: StopToken) throws {
        let control = try CollectorSession(
            context: context, collector: shard.collector, security: configuration.security, purpose: .discovery,
            hello: CollectorSession.hello(role: .worker, nodeID: configuration.workerID), following: shard.choice)
        defer { control.close() }
        let directory = shard.directory
        var shardCheck = ShardCheck(listed: shard.index, of: shard.count)
        var lastWelcome: UInt64?
        var lastDirectoryLog: UInt64?
        var followedChanges = control.choice.value.changes
        while !stop.isStopped {
            let now = Clock.monotonicNanoseconds()
            control.sayHelloIfDue(now: now)
            if shard.index == 0 {
                // One loop speaks for the node (the others' collectors are in their logs).
                let known = capturesKnown
                capturesGauge.record(known)
                let detection = supervision.health(at: now)
                liveness.beat(
                    "\(detection.detail), \(known) capture nodes known, "
                        + (lastWelcome.map { String(format: "last word from the collector %.1f s ago", Double(now - $0) / 1e9) } ?? "no word from the collector yet"),
                    healthy: detection.healthy)
            }
            let reply: CollectorSession.Reply?
            do {
                reply = try control.receive(timeoutMilliseconds: 200)
            } catch let error as ZMQError where error.isTerminated {
                return
            }
            let choice = control.choice.value
            if choice.changes != followedChanges {
                // A failover group's active changed (SPEC.md 18.3): the threads say Idle to it at once.
                followedChanges = choice.changes
                counters.add("collector_changes")
                logger.notice("\(shard.label)following the active collector", metadata: [
                    "collector": "\(choice.endpoints[choice.active])", "epoch": "\(choice.epoch)",
                ])
            }
            guard let reply else { continue }
            guard case .welcome(let welcome) = reply else {
                counters.add("control_malformed")
                continue
            }
            let welcomeAt = Clock.monotonicNanoseconds()
            lastWelcome = welcomeAt
            if let mismatch = shardCheck.check(welcome) {
                counters.add("collector_shard_mismatch")
                if let message = mismatch.newly { logger.error("\(message): every node must list the same shards in the same order") }
            }
            let update = directory.learnWithEpochs(
                welcome.captures.map { ($0.frameEndpoint, $0.curvePublicKey.isEmpty ? nil : $0.curvePublicKey, $0.epoch) }, at: welcomeAt)
            // The stream of each new entry, for the log: one pass over the Welcome (it may list ~10^5 entries), not one
            // per entry added.
            let streams = update.added.isEmpty ? [:] : Dictionary(
                welcome.captures.map { ($0.frameEndpoint, $0.stream) }, uniquingKeysWith: { first, _ in first })
            for entry in update.added {
                let stream = streams[entry.endpoint] ?? ""
                logger.info("learned capture", metadata: ["stream": "\(stream.prefix(Wire.maxStreamIDLength))", "endpoint": "\(entry.endpoint)"])
            }
            for entry in update.forgotten {
                logger.info("forgot capture: no Welcome listed it for 30 s", metadata: ["endpoint": "\(entry.endpoint)"])
            }
            for entry in update.restarted {
                logger.info("capture node restarted (a new epoch): the threads attach to it again", metadata: ["endpoint": "\(entry.endpoint)"])
            }
            for name in update.counters { counters.add(name) }
            if !update.counters.isEmpty, lastDirectoryLog.map({ welcomeAt - $0 >= 10_000_000_000 }) ?? true {
                lastDirectoryLog = welcomeAt
                logger.warning(
                    "announced capture nodes refused (logged at most once per 10 s)",
                    metadata: [
                        "rejected_endpoint": "\(counters.value("captures_rejected_endpoint"))",
                        "rejected_key": "\(counters.value("captures_rejected_key"))",
                        "refused_cap": "\(counters.value("captures_refused_cap"))", "max_captures": "\(directory.maxEntries)",
                    ])
            }
        }
    }

    // MARK: - Detection

    private func detectionLoop(index: Int, analyzer: FrameAnalyzer, stop: StopToken) throws {
        let workerID = "\(configuration.workerID)/t\(index)"
        let shard = shards[threadShards[index]]
        let directory = shard.directory
        let results = try CollectorSession(
            context: context, collector: shard.collector, security: configuration.security, purpose: .results,
            following: shard.choice)
        let ready: [UInt8] = try Ready(worker: workerID).serializedBytes()
        /// Frames received since the thread started that it answers (each Idle says how many: SPEC 3.2). A message
        /// without a valid header has no stream to answer to and is not counted: else a node pushing garbage unasked
        /// would make the collector strike this thread for frames it could never answer.
        var framesReceived: UInt64 = 0
        var lastIdle: UInt64 = 0
        func sayIdle() {
            var idle = Idle()
            idle.worker = workerID
            idle.framesReceived = framesReceived
            if !results.send(.idle(idle)) { counters.add("idle_lost") }
            lastIdle = Clock.monotonicNanoseconds()
        }
        /// One DEALER per capture node: the thread attaches to each (Ready), and gets a frame from the one the collector
        /// assigned it to.
        var captures: [Capture] = []
        defer {
            captures.forEach { $0.socket.close() }
            results.close()
        }
        var generation: UInt64?
        // The collector forgets a thread it has not heard from for 3 s: an idle thread says Idle again every second. A
        // node forgets an attachment after 15 s: Ready again every 5 s, and at once to a node that restarted (a new
        // epoch in a Welcome: syncCaptures). Readys every second to every node were 3,200 messages a second for 100
        // cameras and 32 threads, more than the frames' own dispatch (BENCHMARKS "Fleet simulation").
        let idleRefresh: UInt64 = 1_000_000_000
        var lastActiveChanges = results.activeChanges
        let readyRefresh: UInt64 = 5_000_000_000

        while !stop.isStopped {
            if directory.currentGeneration != generation {
                generation = syncCaptures(&captures, from: directory)
            }
            let now = Clock.monotonicNanoseconds()
            for index in captures.indices where captures[index].lastReady.map({ now &- $0 >= readyRefresh }) ?? true {
                _ = try? captures[index].socket.send([ready], dontWait: true)
                captures[index].lastReady = now
            }
            // A new active collector (failover, SPEC.md 18) knows nothing of this thread: Idle at once.
            let changes = results.activeChanges
            if !captures.isEmpty, now &- lastIdle >= idleRefresh || changes != lastActiveChanges {
                if changes != lastActiveChanges {
                    logger.debug("idle to a new active collector", metadata: ["thread": "\(workerID)", "index": "\(results.choice.value.active)"])
                }
                lastActiveChanges = changes
                sayIdle()
            }
            guard !captures.isEmpty else {
                stop.sleep(seconds: 0.1)
                continue
            }

            let readable: [Bool]
            do {
                readable = try ZMQSocket.poll(captures.map(\.socket), timeoutMilliseconds: 200)
            } catch let error as ZMQError where error.isTerminated {
                return
            }
            for (index, isReadable) in readable.enumerated() where isReadable {
                guard let received = try captures[index].socket.receive(dontWait: true) else { continue }
                if try handle(received, analyzer: analyzer, workerID: workerID, results: results) { framesReceived &+= 1 }
                // Idle again, after the result (unless stopping: no new work then).
                if !stop.isStopped { sayIdle() }
            }
        }
        // Stopping (SIGTERM): a frame a capture node already sent against this thread's credit is still analysed and
        // answered. The results socket lingers 2 s on close, so the answers go out.
        // A frame sent just before the stop may still be on the wire: wait 100 ms for such stragglers.
        var drained = 0
        let deadline = Clock.monotonicNanoseconds() + 100_000_000
        while !captures.isEmpty, Clock.monotonicNanoseconds() < deadline {
            let left = Int((deadline - min(deadline, Clock.monotonicNanoseconds())) / 1_000_000) + 1
            let readable = try ZMQSocket.poll(captures.map(\.socket), timeoutMilliseconds: left)
            for (position, isReadable) in readable.enumerated() where isReadable {
                while let received = try captures[position].socket.receive(dontWait: true) {
                    _ = try handle(received, analyzer: analyzer, workerID: workerID, results: results)
                    drained += 1
                }
            }
        }
        if drained > 0 { logger.info("finished the frames in hand before stopping", metadata: ["frames": "\(drained)", "thread": "\(index)"]) }
    }

    /// A detection thread's connection to one capture node.
    private struct Capture {
        var entry: CaptureDirectory.Entry
        var socket: ZMQSocket
        /// The node's epoch when the thread last attached (0: unknown).
        var epoch: UInt64
        /// When the thread last sent it a Ready (nil: never, or the node restarted since).
        var lastReady: UInt64?
    }

    /// Brings this thread's capture sockets in line with the directory: closes those for forgotten entries, connects
    /// new ones. Returns the generation synced to.
    private func syncCaptures(_ captures: inout [Capture], from directory: CaptureDirectory) -> UInt64 {
        let (generation, listed) = directory.snapshotWithEpochs()
        let epochs = Dictionary(listed.map { ($0.entry, $0.epoch) }, uniquingKeysWith: max)
        for capture in captures where epochs[capture.entry] == nil { capture.socket.close() }
        captures.removeAll { epochs[$0.entry] == nil }
        for index in captures.indices {
            // A node restarted at the same endpoint has forgotten this thread: attach again now (the socket reconnects
            // by itself).
            guard let epoch = epochs[captures[index].entry], epoch > captures[index].epoch else { continue }
            captures[index].epoch = epoch
            captures[index].lastReady = nil
        }
        let held = Set(captures.map(\.entry))
        for (entry, epoch) in listed where !held.contains(entry) {
            let socket: ZMQSocket
            do {
                socket = try ZMQSocket(context: context, kind: .dealer)
            } catch {
                logger.error("cannot open a socket for a capture node", metadata: ["endpoint": "\(entry.endpoint)", "error": "\(error)"])
                continue
            }
            do {
                try socket.setMaxMessageSize(Wire.maxFrameMessageBytes)
                try socket.setTCPKeepalive(idleSeconds: 10, intervalSeconds: 2, count: 3)
                // A capture node that is gone stays in the directory up to 30 s: retried with backoff (up to 5 s), not
                // every 100 ms by each thread (a hundred restarted nodes × 32 threads were 32,000 connects a second).
                try socket.setReconnectInterval(milliseconds: 100, maxMilliseconds: 5000)
                if let security = configuration.security {
                    guard let key = entry.key else {
                        logger.error("capture node without a CURVE key: not connecting", metadata: ["endpoint": "\(entry.endpoint)"])
                        socket.close()
                        continue
                    }
                    try socket.makeCurveClient(serverKey: key, keyPair: security.keyPair)
                }
                try socket.connect(entry.endpoint)
                captures.append(Capture(entry: entry, socket: socket, epoch: epoch, lastReady: nil))
            } catch {
                socket.close()
                logger.error("cannot connect to capture", metadata: ["endpoint": "\(entry.endpoint)", "error": "\(error)"])
            }
        }
        return generation
    }

    /// Analyses one received frame message (decisions in ``FrameHandling``) and sends its result to the collector.
    /// Returns whether the frame had a result to send (whether or not the send succeeded).
    private func handle(_ parts: [[UInt8]], analyzer: FrameAnalyzer, workerID: String, results: CollectorSession) throws -> Bool {
        let handling = FrameHandling(defaults: configuration.analysis, workerID: workerID)
        let outcome = handling.handle(parts: parts, at: Clock.now()) { jpeg, orientation, options in
            try analyzer.analyze(jpeg: jpeg, orientation: orientation, options: options)
        }
        counters.add(outcome.counts)
        if let rejection = outcome.rejection {
            // Without a valid header there is no stream to answer to: counted (by its code), logged once per interval.
            logOncePerInterval("malformed frame", rejection: rejection)
        }
        guard let result = outcome.result else { return false }
        if result.status == .processed { recordTimings(result.timings) }
        let bytes: [UInt8] = try Envelope(.result(result)).serializedBytes()
        if try !results.socket.send([bytes], dontWait: true) {
            counters.add("results_lost")
        }
        return true
    }

    private let logLock = NSLock()
    private var lastRejectionLog: UInt64?

    /// Logs a rejected frame at most once per 10 s (the counters carry the rest).
    private func logOncePerInterval(_ message: Logger.Message, rejection: ProtocolError) {
        let now = Clock.monotonicNanoseconds()
        let due = logLock.withLock {
            guard lastRejectionLog.map({ now &- $0 >= 10_000_000_000 }) ?? true else { return false }
            lastRejectionLog = now
            return true
        }
        if due {
            logger.warning(message, metadata: ["error": "\(rejection)", "note": "logged at most once per 10 s; see frames_rejected_* counters"])
        }
    }

    private func recordTimings(_ timings: FrameTimings) {
        decodeTimer.recordNanoseconds(FrameHandling.nanoseconds(milliseconds: timings.decodeMs))
        detectTimer.recordNanoseconds(FrameHandling.nanoseconds(milliseconds: timings.detectMs))
        if timings.classifyMs > 0 { classifyTimer.recordNanoseconds(FrameHandling.nanoseconds(milliseconds: timings.classifyMs)) }
        if timings.queueMs > 0 { queueTimer.recordNanoseconds(FrameHandling.nanoseconds(milliseconds: timings.queueMs)) }
    }

    /// Turns a frame into its result: processed, dropped (past its deadline) or error (undecodable, or invalid
    /// settings). The frame's per-stream settings override `defaults` field by field. See ``FrameHandling``.
    public static func analyse(
        _ frame: FrameMessage, receivedAt: Int64, analyzer: FrameAnalyzer, workerID: String,
        defaults: AnalysisOptions = AnalysisOptions()
    ) -> FrameResult {
        FrameHandling(defaults: defaults, workerID: workerID).handle(frame, at: Instant(monotonicNs: 0, wallUs: receivedAt)) { jpeg, orientation, options in
            try analyzer.analyze(jpeg: jpeg, orientation: orientation, options: options)
        }.result ?? FrameResult()
    }
}

/// Moves a non-Sendable value to the one thread that will own it.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
