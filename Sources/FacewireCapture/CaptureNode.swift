import CoreMetrics
import FacewireImage
import FacewireProtocol
import FacewireRuntime
import Foundation
import Logging
import ZeroMQ

/// A capture node: reads frames from a source, numbers them and hands each to an idle worker (see
/// ``FrameDispatcher``); tells the collector about itself, about frames it had to skip and about the end of the source.
///
/// ``run(stop:)`` blocks the calling thread (a thread the caller owns) until the source ends or `stop` is set.
public final class CaptureNode: @unchecked Sendable {
    public let configuration: CaptureConfiguration
    public let counters = Counters()
    /// Beats whenever the capture loop goes round (`/healthz`); unhealthy while a camera is lost.
    public let liveness = Liveness()
    private let cameraUp = Gauge(label: "facewire_capture_source_up")
    private let waitingWorkers = Gauge(label: "facewire_capture_waiting_workers")
    private let logger: Logger
    private let context = ZMQContext()

    /// The endpoint actually bound, once ``run(stop:)`` bound it.
    public private(set) var boundEndpoint: String?

    public init(configuration: CaptureConfiguration, logger: Logger) throws {
        guard Wire.isValidStreamID(configuration.stream) else {
            throw NodeError("invalid stream id \(configuration.stream.debugDescription): use 1-64 of A-Z a-z 0-9 . _ -")
        }
        self.configuration = configuration
        self.logger = logger
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
                    logger.warning("refused a worker whose key is not allowed", metadata: ["key": "\(decision.key)", "address": "\(decision.address)"])
                }
            }
        }
        defer { withExtendedLifetime(zap) {} }
        let frames = try FrameDispatcher(
            context: context, bind: configuration.bind, counters: counters, curveSecretKey: configuration.security?.keyPair.secretKey)
        let bound = frames.endpoint
        boundEndpoint = bound
        let advertised = configuration.advertise ?? bound
        logger.info("capture publishing", metadata: ["stream": "\(configuration.stream)", "endpoint": "\(bound)", "source": "\(source.description)"])
        if ProcessInfo.processInfo.environment[V4L2Backends.simulationVariable].map({ !$0.isEmpty }) == true, source is V4L2Camera {
            logger.notice("the camera is SIMULATED (\(V4L2Backends.simulationVariable) is set)")
        }

        var control: ZMQSocket?
        if let collector = configuration.collector {
            let socket = try ZMQSocket(context: context, kind: .dealer)
            try socket.setHighWaterMarks(send: 100_000)
            try socket.setLinger(milliseconds: 5000)
            try CurveSecurity.secureToCollector(socket, configuration.security)
            try socket.connect(collector)
            control = socket
        }
        var epoch = configuration.epoch
        var nextSeq: UInt64 = 0
        var lastHello: UInt64 = 0
        func sendControl(_ body: Envelope.OneOf_Body) {
            guard let control else { return }
            do {
                if try !control.send([try Envelope(body).serializedBytes()], dontWait: true) {
                    counters.add("control_lost")
                }
            } catch {
                counters.add("control_lost")
            }
        }
        func hello() {
            var hello = Hello()
            hello.role = .capture
            hello.nodeID = defaultNodeID()
            hello.stream = configuration.stream
            hello.epoch = epoch
            hello.frameEndpoint = advertised
            hello.nextSeq = nextSeq
            hello.curvePublicKey = configuration.security?.keyPair.publicKey ?? ""
            sendControl(.hello(hello))
            lastHello = Clock.monotonicNanoseconds()
        }
        hello()
        var pendingSkip: (first: UInt64, count: UInt64, time: Int64)?
        func flushSkips() {
            guard let skip = pendingSkip else { return }
            var skipped = Skipped()
            skipped.stream = configuration.stream
            skipped.epoch = epoch
            skipped.firstSeq = skip.first
            skipped.count = skip.count
            skipped.reason = "no-worker"
            skipped.captureTimeUs = skip.time
            sendControl(.skipped(skipped))
            pendingSkip = nil
        }
        func sendEnd() {
            flushSkips()
            var end = StreamEnd()
            end.stream = configuration.stream
            end.epoch = epoch
            end.nextSeq = nextSeq
            sendControl(.end(end))
        }

        var statistics = CaptureStatistics(now: Clock.monotonicNanoseconds())
        let statisticsInterval = UInt64(max(0, configuration.statisticsIntervalSeconds) * 1e9)
        func helloIfDue() {
            let now = Clock.monotonicNanoseconds()
            try? frames.collectPending()
            waitingWorkers.record(frames.waitingWorkers)
            liveness.beat("\(source.description): epoch \(epoch), \(nextSeq) frames numbered")
            cameraUp.record(1)
            if now - lastHello > UInt64(Wire.helloIntervalMilliseconds) * 1_000_000 {
                flushSkips()
                hello()
            }
            if statisticsInterval > 0, now - statistics.windowStart >= statisticsInterval {
                let report = statistics.report(counters: counters, now: now)
                logger.info("capture statistics", metadata: ["stream": "\(configuration.stream)", "figures": "\(report)"])
            }
        }

        let live = source as? LiveFrameSource
        let fps: Double? = switch configuration.pacing {
        case .realTime: live == nil ? source.nominalFPS ?? 30 : nil
        case .fixed(let rate): live == nil ? rate : nil
        case .asFastAsPossible: nil
        }
        // A live source (camera, pipe) paces itself; with --fps max it is read only when a worker is idle, which
        // holds a pipe's writer back instead of dropping.
        let waitsForWorkers = configuration.pacing == .asFastAsPossible
        if live != nil, case .fixed = configuration.pacing {
            logger.warning("--fps is ignored for a live source, which sets its own pace; use --max-fps to send fewer frames")
        }
        var rateLimit = configuration.maxFPS.map { RateLimit(maxFPS: $0) }
        let start = Clock.monotonicNanoseconds()
        /// A numbered frame ready to go: its parts, sequence and capture time.
        typealias Outgoing = (parts: [[UInt8]], seq: UInt64, captureTime: Int64)
        func markDispatched(_ frame: Outgoing, to worker: String) {
            logger.debug("dispatched", metadata: ["seq": "\(frame.seq)", "worker": "\(worker)"])
            flushSkips()
            counters.add("frames_sent")
        }
        func dropAtSource(_ frame: Outgoing) {
            counters.add("frames_dropped_at_source")
            counters.add("frames_dropped_no-worker")
            if let skip = pendingSkip, skip.first + skip.count == frame.seq {
                pendingSkip = (skip.first, skip.count + 1, skip.time)
            } else {
                flushSkips()
                pendingSkip = (frame.seq, 1, frame.captureTime)
            }
        }
        /// Sends to an idle worker if there is one; never waits.
        func offer(_ frame: Outgoing) throws -> Bool {
            guard let worker = try frames.dispatch(frame.parts, wait: false, stop: stop) else { return false }
            markDispatched(frame, to: worker)
            return true
        }

        // Live pacing keeps at most one frame that no worker was free for (a leaky one-frame queue): it goes to
        // the first worker that becomes idle before the next frame is captured, and is dropped at the source
        // (reported to the collector) when that next frame replaces it. Latency stays under one frame interval,
        // and a worker that finishes just after a frame arrived still gets it.
        var held: Outgoing?
        /// Waits for a live source's next frame, meanwhile offering the held frame. False when stopped.
        func awaitLiveFrame(_ live: LiveFrameSource) throws -> Bool {
            while !stop.isStopped {
                if let frame = held, try offer(frame) { held = nil }
                if try live.waitForFrame(timeoutMilliseconds: held == nil ? 100 : 5) { return true }
                helloIfDue()
            }
            return false
        }
        /// A camera that disappeared: end the epoch, wait for it to come back, start a new epoch.
        func recover(from error: FrameSourceError) throws -> Bool {
            guard let camera = source as? V4L2Camera else { return false }
            counters.add("camera_lost")
            if let frame = held { dropAtSource(frame) }
            held = nil
            sendEnd()
            logger.error("camera lost; retrying", metadata: ["error": "\(error)", "frames": "\(nextSeq)", "every": "\(configuration.reopenIntervalSeconds) s"])
            cameraUp.record(0)
            while !stop.isStopped {
                // Beat with the bad news: /healthz stays reachable but says what is wrong.
                liveness.beat("camera lost: \(error); retrying every \(configuration.reopenIntervalSeconds) s", healthy: false)
                stop.sleep(seconds: configuration.reopenIntervalSeconds)
                if stop.isStopped { return false }
                do {
                    try camera.reopen()
                } catch {
                    logger.debug("camera still gone", metadata: ["error": "\(error)"])
                    continue
                }
                epoch = max(UInt64(Clock.wallMicroseconds()), epoch + 1)
                nextSeq = 0
                counters.add("camera_reopened")
                logger.notice("camera back: a new epoch begins", metadata: ["source": "\(camera.description)", "epoch": "\(epoch)"])
                hello()
                return true
            }
            return false
        }

        /// Waits until `due` (monotonic), offering the held frame to workers that free up meanwhile.
        func waitUntil(_ due: UInt64) throws {
            while !stop.isStopped, Clock.monotonicNanoseconds() < due {
                let left = Double(due - min(due, Clock.monotonicNanoseconds())) / 1e9
                if let frame = held {
                    if try offer(frame) {
                        held = nil
                    } else {
                        // No idle worker (offer drained the list): block until a Ready comes in.
                        _ = try frames.awaitCredit(timeoutMilliseconds: min(max(Int(left * 1000), 1), 100))
                    }
                } else {
                    stop.sleep(seconds: min(left, 0.1))
                }
                helloIfDue()
            }
        }

        var firstMediaTime: Double?
        var lastOffset = 0.0
        var index: UInt64 = 0  // frames read (the pacing clock)
        var numbered: UInt64 = 0  // frames numbered over all epochs (--frames)
        do {
            while !stop.isStopped {
                if let maxFrames = configuration.maxFrames, numbered >= maxFrames { break }
                if waitsForWorkers, nextSeq > 0 || index > 0 {
                    // Unpaced: read the next frame only once a worker is idle, so its capture time is when work
                    // can start and nothing waits at the source.
                    guard try frames.awaitIdleWorker(stop: stop, whileWaiting: helloIfDue) else { break }
                }
                helloIfDue()
                let frame: SourceFrame
                do {
                    if let live, !waitsForWorkers {
                        guard try awaitLiveFrame(live) else { break }
                    }
                    guard let next = try source.next() else { break }
                    frame = next
                } catch let error as FrameSourceError where error.code == .deviceLost {
                    guard try recover(from: error) else { break }
                    continue
                } catch {
                    counters.add("source_errors")
                    logger.error("source failed", metadata: ["error": "\(error)"])
                    throw error
                }
                index += 1
                if let fps {
                    // Timed pacing: the frame is due at its place on the source's timeline (a video's presentation
                    // time with --fps realtime, else its index at the rate). It was read ahead; until it is due the
                    // held frame may still go to a worker that frees up.
                    let useMediaTime = configuration.pacing == .realTime
                    if firstMediaTime == nil { firstMediaTime = frame.mediaTimeSeconds }
                    var offset = Double(index - 1) / fps
                    if useMediaTime, let time = frame.mediaTimeSeconds, let first = firstMediaTime {
                        offset = time - first
                    }
                    offset = max(offset, lastOffset)  // never back in time
                    lastOffset = offset
                    try waitUntil(start + UInt64(offset * 1e9))
                    if stop.isStopped { break }
                }
                counters.add("frames_captured")
                let captureTime = frame.captureTimeUs ?? Clock.wallMicroseconds()
                if var limit = rateLimit {
                    let keep = limit.keep(timeMicroseconds: captureTime)
                    rateLimit = limit
                    guard keep else {
                        counters.add("frames_over_max_fps")
                        continue
                    }
                }
                var header = FrameHeader()
                header.version = Wire.version
                header.stream = configuration.stream
                header.epoch = epoch
                header.seq = nextSeq
                header.captureTimeUs = captureTime
                header.width = UInt32(frame.width)
                header.height = UInt32(frame.height)
                header.orientation = UInt32((configuration.orientation ?? frame.orientation).rawValue)
                if let settings = configuration.settings { header.settings = settings }
                if !waitsForWorkers, configuration.maxAgeMilliseconds > 0 {
                    header.deadlineUs = header.captureTimeUs + Int64(configuration.maxAgeMilliseconds) * 1000
                }
                header.sentTimeUs = Clock.wallMicroseconds()
                numbered += 1
                let outgoing: Outgoing = (try FrameMessage(header: header, jpeg: frame.jpeg).parts(), nextSeq, header.captureTimeUs)
                nextSeq += 1
                if let previous = held {
                    // One last chance for the held frame, then the newer one replaces it.
                    if try !offer(previous) { dropAtSource(previous) }
                    held = nil
                }
                if waitsForWorkers || (live == nil && outgoing.seq == 0) {
                    // The first frame of a timed source, and every frame of an unpaced one, waits for an idle worker.
                    guard let worker = try frames.dispatch(outgoing.parts, wait: true, stop: stop, whileWaiting: helloIfDue)
                    else { break }
                    markDispatched(outgoing, to: worker)
                } else if try !offer(outgoing) {
                    held = outgoing
                }
            }
            // The source ended: the held frame may still go to a worker that frees up within one frame interval.
            if let frame = held {
                let deadline = Clock.monotonicNanoseconds() + UInt64(1e9 / (fps ?? 30))
                while !stop.isStopped, Clock.monotonicNanoseconds() < deadline {
                    if try offer(frame) {
                        held = nil
                        break
                    }
                    _ = try frames.awaitCredit(timeoutMilliseconds: 10)
                }
            }
        } catch let error as ZMQError where error.isTerminated {
            // The context was shut down: fall through and report what was numbered.
        }
        if let frame = held { dropAtSource(frame) }
        // Also when stopped by a signal: the collector then knows the last sequence and can finish the stream.
        sendEnd()
        logger.info("capture finished", metadata: ["stream": "\(configuration.stream)", "frames": "\(nextSeq)", "counters": "\(counters.summary)"])
        (source as? LatestFrameSource)?.close()
        control?.close()
        frames.close()
    }
}
