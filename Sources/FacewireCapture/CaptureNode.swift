import CoreMetrics
import FacewireImage
import FacewireProtocol
import FacewireRuntime
import Foundation
import Logging
import ZeroMQ
import FacewireVocabulary
import FacewireCaptureCore

/// A capture node: reads frames from a source, numbers them and hands each to an idle worker; tells the collector
/// about itself, about frames it had to skip and about the end of the source.
///
/// This is the shell that moves bytes: every decision (pacing, numbering, credits, the held frame, skips, epochs,
/// hellos) is ``CaptureCore``'s. The loop feeds it Readys from the frame socket (``FrameRouter``), frames from the
/// source and ticks, carries out what it answers, and reopens a camera that disappeared.
///
/// ``run(stop:)`` blocks the calling thread (a thread the caller owns) until the source ends or `stop` is set.
public final class CaptureNode: @unchecked Sendable {
    public let configuration: CaptureConfiguration
    public let counters = Counters()
    /// Beats whenever the capture loop goes round (`/healthz`); unhealthy while a camera is lost.
    public let liveness = Liveness()
    /// Gauges carry the stream as a label: a process may run several nodes (``CaptureGroup``).
    private let cameraUp: Gauge
    private let waitingWorkers: Gauge
    private let logger: Logger
    private let context = ZMQContext()

    /// The endpoint actually bound, once ``run(stop:)`` bound it.
    public private(set) var boundEndpoint: String?
    /// The preview socket's endpoint actually bound, once ``run(stop:)`` bound it (nil with `--preview-fps 0`).
    public private(set) var boundPreviewEndpoint: String?

    public init(configuration: CaptureConfiguration, logger: Logger) throws {
        guard Wire.isValidStreamID(configuration.stream) else {
            throw NodeError("invalid stream id \(configuration.stream.debugDescription): use 1-64 of A-Z a-z 0-9 . _ -")
        }
        self.configuration = configuration
        self.logger = logger
        cameraUp = Gauge(label: "facewire_capture_source_up", dimensions: [("stream", configuration.stream)])
        waitingWorkers = Gauge(label: "facewire_capture_waiting_workers", dimensions: [("stream", configuration.stream)])
    }

    /// Reads and publishes until the source ends (then tells the collector) or `stop` is set.
    public func run(stop: StopToken) throws {
        let source = try openFrameSource(
            configuration.source, loop: configuration.loop, jpegQuality: configuration.jpegQuality, camera: configuration.camera,
            counters: counters)
        // No context shutdown on stop: every wait here wakes up at least every 100 ms to look at `stop`, so the
        // node can still tell the collector where its stream ended.

        var zap: ZAPAuthenticator?
        if let security = configuration.security {
            zap = try ZAPAuthenticator(context: context, allowed: security.allowedClients) { [counters, logger] decision in
                counters.add(decision.accepted ? "zap_accepted" : "zap_denied")
                if decision.isFirstRefusal {
                    let peer = decision.domain == PreviewPublisher.zapDomain ? "view" : "worker"
                    logger.warning("refused a \(peer) whose key is not allowed", metadata: ["key": "\(decision.key)", "address": "\(decision.address)"])
                }
            }
        }
        defer { withExtendedLifetime(zap) {} }
        let router = try FrameRouter(context: context, bind: configuration.bind, curveSecretKey: configuration.security?.keyPair.secretKey)
        let bound = router.endpoint
        boundEndpoint = bound
        let advertised = configuration.advertise ?? bound
        let preview = try configuration.previewFPS > 0 ? PreviewPublisher(
            context: context, bind: configuration.previewBind ?? CaptureConfiguration.defaultPreviewBind(frameBind: configuration.bind) ?? "",
            stream: configuration.stream, fps: configuration.previewFPS, curveSecretKey: configuration.security?.keyPair.secretKey,
            counters: counters) : nil
        boundPreviewEndpoint = preview?.endpoint
        let previewAdvertised = preview.map { configuration.advertisedPreviewEndpoint(bound: $0.endpoint) } ?? ""
        logger.info("capture publishing", metadata: [
            "stream": "\(configuration.stream)", "endpoint": "\(bound)", "source": "\(source.description)",
            "preview": "\(preview.map { "\($0.endpoint) at most \(configuration.previewFPS) fps" } ?? "off")",
        ])
        if ProcessInfo.processInfo.environment[V4L2Backends.simulationVariable].map({ !$0.isEmpty }) == true, source is V4L2Camera {
            logger.notice("the camera is SIMULATED (\(V4L2Backends.simulationVariable) is set)")
        }

        let control = try configuration.collector.map {
            try CollectorLink(
                context: context, collectors: $0, stream: configuration.stream, security: configuration.security, counters: counters,
                logger: logger)
        }
        if control == nil {
            logger.warning("no collector: no worker thread can be assigned, and every frame is dropped at the source (SPEC 3)")
        }
        let live = source as? LiveFrameSource
        if live != nil, case .fixed = configuration.pacing {
            logger.warning("--fps is ignored for a live source, which sets its own pace; use --max-fps to send fewer frames")
        }
        let settings = configuration.coreSettings(for: source, frameEndpoint: advertised, previewEndpoint: previewAdvertised)
        var core = Core(settings: settings, at: Clock.now())
        /// Sends a frame the core handed over; only a frame a worker took is previewed, so that its result will exist.
        func transmit(_ transmission: Core.Transmission) -> Core.SendOutcome {
            let frame = transmission.frame
            guard let parts = try? FrameMessage(header: frame.header, jpeg: frame.payload).parts() else {
                counters.add("frames_unencodable")
                return .gone
            }
            let outcome = router.send(parts, to: transmission.identity)
            if case .sent = outcome {
                logger.debug("dispatched", metadata: ["seq": "\(frame.header.seq)", "worker": "\(transmission.worker)"])
                preview?.offer(parts)
            }
            return outcome
        }
        /// Carries out what the core decided: each send (its outcome reported back), then counts, logs and control
        /// messages.
        func perform(_ output: Core.Output) {
            for output in core.settle(output, at: { Clock.now() }, transmit: transmit) {
                counters.add(output.counts)
                logger.write(output.logs)
                for case .control(let body) in output.actions { control?.send(body) }
            }
        }
        /// Feeds the Readys that arrive within `milliseconds` to the core (a view subscribing or leaving ends the wait
        /// too), and applies the preview subscriptions that arrived.
        func collectReadys(waiting milliseconds: Int) throws {
            let others = (control?.sockets ?? []) + [preview?.pollable].compactMap { $0 }
            let (readys, input) = try router.receiveReadys(timeoutMilliseconds: milliseconds, wakingFor: others)
            for (identity, ready) in readys {
                switch ready {
                case .success(let ready): perform(core.ready(ready, from: identity, at: Clock.now()))
                case .failure(let error): perform(core.malformedReady(error, at: Clock.now()))
                }
            }
            // Assignments are read on every pass (not only when the poll saw them): a frame waits for them.
            for assignment in try control?.receiveAssignments() ?? [] {
                perform(core.assigned(assignment, at: Clock.now()))
            }
            if let control, control.activeChanges != activeChanges {
                // A new active collector (failover): it hears this node's hello and request now, not in a second.
                activeChanges = control.activeChanges
                logger.notice("following the active collector", metadata: ["collector": "\(control.activeEndpoint)"])
                perform(core.collectorChanged(at: Clock.now()))
            }
            if preview != nil, input.last == true { try preview?.readSubscriptions() }
        }
        var activeChanges = control?.activeChanges ?? 0
        perform(core.start(at: Clock.now()))
        // The loop goes round on every Ready, assignment and frame: the health note and the gauges are refreshed at
        // most every 100 ms (a hundred nodes on two cores spent a few % of the machine rebuilding them).
        var lastNoteNs: UInt64?
        do {
            loop: while !stop.isStopped {
                try collectReadys(waiting: 0)
                perform(core.tick(at: Clock.now(), totals: counters.totals))
                let nowNs = Clock.monotonicNanoseconds()
                if lastNoteNs.map({ nowNs &- $0 >= 100_000_000 }) ?? true {
                    lastNoteNs = nowNs
                    waitingWorkers.record(core.creditsHeld)
                    liveness.beat("\(source.description): epoch \(core.epoch), \(core.nextSeq) frames numbered")
                    cameraUp.record(1)
                } else {
                    liveness.beat()
                }
                switch core.next(at: Clock.now()) {
                case .finished: break loop
                case .wait(let until):
                    let left = until.map { $0 - min($0, Clock.monotonicNanoseconds()) } ?? .max
                    try collectReadys(waiting: Int(min(left / 1_000_000 + 1, 100)))
                case .read:
                    if let live, settings.pacing == .live, try !live.waitForFrame(timeoutMilliseconds: core.holdsFrame ? 5 : 100) { continue }
                    do {
                        guard let frame = try source.next() else {
                            perform(core.sourceEnded(at: Clock.now()))
                            continue
                        }
                        let orientation = UInt32((configuration.orientation ?? frame.orientation).rawValue)
                        perform(core.frameRead(
                            Core.ReadFrame(payload: frame.jpeg, width: frame.width, height: frame.height, orientation: orientation,
                                captureTimeUs: frame.captureTimeUs, mediaTimeSeconds: frame.mediaTimeSeconds), at: Clock.now()))
                    } catch let error as FrameSourceError where error.code == .deviceLost && source is V4L2Camera {
                        perform(core.sourceLost(at: Clock.now()))
                        guard reopen(source as! V4L2Camera, after: error, frames: core.nextSeq, stop: stop) else { break loop }
                        perform(core.sourceBack(at: Clock.now()))
                        lastNoteNs = nil  // the health note and the camera gauge say it is back at once
                    } catch let error as FrameSourceError where error.code == .deviceLost {
                        break loop
                    } catch {
                        counters.add("source_errors")
                        logger.error("source failed", metadata: ["error": "\(error)"])
                        perform(core.stop(at: Clock.now()))
                        throw error
                    }
                }
            }
        } catch let error as ZMQError where error.isTerminated {
            // The context was shut down: fall through and report what was numbered.
        }
        // Also when stopped by a signal: the collector then knows the last sequence and can finish the stream.
        perform(core.stop(at: Clock.now()))
        logger.info("capture finished", metadata: ["stream": "\(configuration.stream)", "frames": "\(core.nextSeq)", "counters": "\(counters.summary)"])
        (source as? LatestFrameSource)?.close()
        control?.close()
        preview?.close()
        router.close()
        // The last frames and the StreamEnd are still in libzmq's queues: deliver them (each socket within its linger)
        // before the process may exit, or the stream's end and last frames are lost without a trace.
        context.terminate()
    }

    private typealias Core = CaptureCore<[UInt8]>

    /// Waits for a camera that disappeared to come back, trying every `--reopen-interval`; false when stopped first.
    private func reopen(_ camera: V4L2Camera, after error: FrameSourceError, frames: UInt64, stop: StopToken) -> Bool {
        let every = configuration.reopenIntervalSeconds
        logger.error("camera lost; retrying", metadata: ["error": "\(error)", "frames": "\(frames)", "every": "\(every) s"])
        cameraUp.record(0)
        while !stop.isStopped {
            // Beat with the bad news: /healthz stays reachable but says what is wrong.
            liveness.beat("camera lost: \(error); retrying every \(every) s", healthy: false)
            stop.sleep(seconds: every)
            if stop.isStopped { return false }
            do {
                try camera.reopen()
                return true
            } catch {
                logger.debug("camera still gone", metadata: ["error": "\(error)"])
            }
        }
        return false
    }
}
