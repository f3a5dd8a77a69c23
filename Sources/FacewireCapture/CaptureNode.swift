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
        let source = try openFrameSource(configuration.source, loop: configuration.loop, jpegQuality: configuration.jpegQuality)
        // No context shutdown on stop: every wait here wakes up at least every 100 ms to look at `stop`, so the
        // node can still tell the collector where its stream ended.

        let frames = try FrameDispatcher(context: context, bind: configuration.bind, counters: counters)
        let bound = frames.endpoint
        boundEndpoint = bound
        let advertised = configuration.advertise ?? bound
        logger.info("capture publishing", metadata: ["stream": "\(configuration.stream)", "endpoint": "\(bound)", "source": "\(source.description)"])

        var control: ZMQSocket?
        if let collector = configuration.collector {
            let socket = try ZMQSocket(context: context, kind: .dealer)
            try socket.setHighWaterMarks(send: 100_000)
            try socket.setLinger(milliseconds: 5000)
            try socket.connect(collector)
            control = socket
        }
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
            hello.epoch = configuration.epoch
            hello.frameEndpoint = advertised
            hello.nextSeq = nextSeq
            sendControl(.hello(hello))
            lastHello = Clock.monotonicNanoseconds()
        }
        hello()
        var pendingSkip: (first: UInt64, count: UInt64, time: Int64)?
        func flushSkips() {
            guard let skip = pendingSkip else { return }
            var skipped = Skipped()
            skipped.stream = configuration.stream
            skipped.epoch = configuration.epoch
            skipped.firstSeq = skip.first
            skipped.count = skip.count
            skipped.reason = "no-worker"
            skipped.captureTimeUs = skip.time
            sendControl(.skipped(skipped))
            pendingSkip = nil
        }

        func helloIfDue() {
            if Clock.monotonicNanoseconds() - lastHello > UInt64(Wire.helloIntervalMilliseconds) * 1_000_000 {
                flushSkips()
                hello()
            }
        }

        let fps: Double? = switch configuration.pacing {
        case .realTime: source.nominalFPS ?? 30
        case .fixed(let rate): rate
        case .asFastAsPossible: nil
        }
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
        var index: UInt64 = 0
        do {
            while !stop.isStopped {
                if let maxFrames = configuration.maxFrames, index >= maxFrames { break }
                if let fps {
                    let due = start + UInt64(Double(index) / fps * 1e9)
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
                } else if nextSeq > 0 {
                    // Unpaced: read the next frame only once a worker is idle, so its capture time is when work
                    // can start and nothing waits at the source.
                    guard try frames.awaitIdleWorker(stop: stop, whileWaiting: helloIfDue) else { break }
                }
                helloIfDue()
                let frame: SourceFrame
                do {
                    guard let next = try source.next() else { break }
                    frame = next
                } catch {
                    counters.add("source_errors")
                    logger.error("source failed", metadata: ["error": "\(error)"])
                    throw error
                }
                index += 1
                var header = FrameHeader()
                header.version = Wire.version
                header.stream = configuration.stream
                header.epoch = configuration.epoch
                header.seq = nextSeq
                header.captureTimeUs = Clock.wallMicroseconds()
                header.width = UInt32(frame.width)
                header.height = UInt32(frame.height)
                header.orientation = UInt32(frame.orientation.rawValue)
                if let settings = configuration.settings { header.settings = settings }
                if fps != nil, configuration.maxAgeMilliseconds > 0 {
                    header.deadlineUs = header.captureTimeUs + Int64(configuration.maxAgeMilliseconds) * 1000
                }
                header.sentTimeUs = Clock.wallMicroseconds()
                let outgoing: Outgoing = (try FrameMessage(header: header, jpeg: frame.jpeg).parts(), nextSeq, header.captureTimeUs)
                nextSeq += 1
                if let previous = held {
                    // One last chance for the held frame, then the newer one replaces it.
                    if try !offer(previous) { dropAtSource(previous) }
                    held = nil
                }
                if fps == nil || outgoing.seq == 0 {
                    // The first frame, and every frame of an unpaced source, waits for an idle worker.
                    guard let worker = try frames.dispatch(outgoing.parts, wait: true, stop: stop, whileWaiting: helloIfDue)
                    else { break }
                    markDispatched(outgoing, to: worker)
                } else if try !offer(outgoing) {
                    held = outgoing
                }
            }
            // The source ended: the held frame may still go to a worker that frees up within one frame interval.
            if let frame = held, let fps {
                let deadline = Clock.monotonicNanoseconds() + UInt64(1e9 / fps)
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
        flushSkips()
        // Also when stopped by a signal: the collector then knows the last sequence and can finish the stream.
        var end = StreamEnd()
        end.stream = configuration.stream
        end.epoch = configuration.epoch
        end.nextSeq = nextSeq
        sendControl(.end(end))
        logger.info("capture finished", metadata: ["stream": "\(configuration.stream)", "frames": "\(nextSeq)", "counters": "\(counters.summary)"])
        control?.close()
        frames.close()
    }
}
