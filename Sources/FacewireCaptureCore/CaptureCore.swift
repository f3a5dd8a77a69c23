import FacewireVocabulary
import FacewireProtocol
import FacewireRuntime
import Logging

/// Every decision a capture node makes, without sockets or clocks: when a frame is due, how it is numbered, which
/// worker gets it, what is held, dropped and reported, and when the collector hears a hello or the stream's end
/// (SPEC 3, 7.1, 8).
///
/// The shell (``CaptureNode``) reads the source and the sockets and feeds what happened in, each input with the time
/// it happened (``Instant``): a frame read, a Ready, the end or loss of the source, or just a tick. The core answers
/// with ``Output``s (control messages for the collector, log lines) and sends frames through the `transmit` closure
/// it was given, which reports whether the send went out. ``next(at:)`` tells the shell what to do next: read a frame,
/// wait (for a Ready or a time), or finish.
///
/// Invariants (tested): every numbered sequence is sent once or reported skipped once, sequences are gap-free per
/// epoch, and no frame goes to a connection without a live credit.
public struct CaptureCore<Payload> {
    /// The moment every input is handed (the one ``FacewireVocabulary/Instant`` of every core).
    public typealias Instant = FacewireVocabulary.Instant

    /// How frames are paced (resolved from `--fps` and the kind of source).
    public enum Pacing: Sendable, Equatable {
        /// A live source (camera, pipe) delivers frames at its own pace; frames no worker waits for are held, then
        /// dropped at the source.
        case live
        /// A file played at `fps`, or by its presentation times (`followsMediaTime`), with the live drop rule. The
        /// first frame waits for a worker, and the timeline starts when it is sent.
        case timed(fps: Double, followsMediaTime: Bool)
        /// `--fps max`: a frame is read only once a worker has a credit; nothing is dropped.
        case unpaced

        /// A file on a timeline (its first frame waits for a worker and starts the timeline).
        public var isTimed: Bool { if case .timed = self { true } else { false } }
    }

    /// What a capture node is configured to do.
    public struct Settings: Sendable {
        /// The stream id (already validated).
        public var stream: String
        /// This node's id in hellos.
        public var nodeID: String
        /// The endpoint announced in hellos.
        public var frameEndpoint: String
        /// CURVE: this node's public key, announced in hellos; empty without CURVE.
        public var curvePublicKey: String = ""
        /// The preview socket's endpoint announced in hellos (SPEC 7.5); empty without one.
        public var previewEndpoint: String = ""
        /// The first epoch (a later one begins each time a lost camera comes back).
        public var epoch: UInt64
        /// How frames are paced.
        public var pacing: Pacing
        /// `--max-fps`.
        public var maxFPS: Double?
        /// `--frames`: frames numbered over all epochs before the stream ends.
        public var maxFrames: Int?
        /// `--max-age`: live and timed frames carry `deadline_us = capture_time_us + maxAge`; 0: none.
        public var maxAgeMilliseconds: Int = 2000
        /// The stream's detection settings, sent in every header.
        public var detection: DetectionSettings?
        /// `--max-workers`: connections holding a credit at once.
        public var maxWorkers: Int = CaptureCore.defaultMaxWorkers
        /// A credit not renewed by a Ready for this long is not used (SPEC 3.1).
        public var creditLifetimeNs: UInt64 = 3_000_000_000
        /// Hellos go out this often (SPEC 7.1).
        public var helloIntervalNs: UInt64 = UInt64(Wire.helloIntervalMilliseconds) * 1_000_000
        /// `--stats-interval`; 0: no statistics lines.
        public var statisticsIntervalNs: UInt64 = 5_000_000_000
        /// Warnings about refused Readys are logged at most once per this interval.
        public var warningIntervalNs: UInt64 = 5_000_000_000

        /// Settings with every limit at its default.
        public init(stream: String, nodeID: String, frameEndpoint: String, epoch: UInt64, pacing: Pacing) {
            self.stream = stream
            self.nodeID = nodeID
            self.frameEndpoint = frameEndpoint
            self.epoch = epoch
            self.pacing = pacing
        }
    }

    /// A frame as the source gave it.
    public struct ReadFrame {
        /// The image (the shell's JPEG bytes; anything in tests).
        public var payload: Payload
        /// Stored width and height, sent in the header.
        public var width: Int
        public var height: Int
        /// EXIF orientation 1...8 to send.
        public var orientation: UInt32
        /// The source's own capture time (a camera buffer's), else nil: the frame is stamped when it is numbered.
        public var captureTimeUs: Int64?
        /// The source's presentation time (timed pacing by media time).
        public var mediaTimeSeconds: Double?

        /// A frame read from the source.
        public init(payload: Payload, width: Int, height: Int, orientation: UInt32 = 1, captureTimeUs: Int64? = nil, mediaTimeSeconds: Double? = nil) {
            self.payload = payload
            self.width = width
            self.height = height
            self.orientation = orientation
            self.captureTimeUs = captureTimeUs
            self.mediaTimeSeconds = mediaTimeSeconds
        }
    }

    /// A numbered frame on its way to a worker.
    public struct Outgoing {
        /// The frame's header, `sent_time_us` set as it is handed over.
        public var header: FrameHeader
        /// The image, as the source gave it.
        public var payload: Payload
    }

    /// How a send went (SPEC 3.1: a failed send consumes the credit; the next one is tried).
    public enum SendOutcome: Sendable {
        case sent
        /// The connection's pipe is full (`EAGAIN`).
        case full
        /// The peer is gone (`EHOSTUNREACH`).
        case gone
    }

    /// Something for the shell to do besides sending frames.
    public enum Output {
        /// A control message for the collector.
        case control(Envelope.OneOf_Body)
        /// A log line.
        case log(Logger.Level, String, Logger.Metadata)
    }

    /// What the shell should do next.
    public enum Step: Equatable, Sendable {
        /// Read the next frame from the source (for a live source: wait for it).
        case read
        /// Wait for a Ready until the monotonic time given (nil: until one comes), ticking at least every 100 ms.
        case wait(untilNs: UInt64?)
        /// The stream is over: stop.
        case finished
    }

    private enum Phase: Equatable {
        case running
        /// The source ended (or `--frames` was reached): a held frame may still go until `deadlineNs`.
        case ending(deadlineNs: UInt64)
        /// The camera is gone; the epoch ended.
        case lost
        case finished
    }

    /// `--max-workers` default.
    public static var defaultMaxWorkers: Int { 4096 }
    /// Longest worker id kept from a Ready (for logs); longer ones are cut.
    public static var maxWorkerIDBytes: Int { 256 }
    /// How often expired credits are removed on a tick.
    static var pruneIntervalNs: UInt64 { 100_000_000 }
    /// Longest routing identity accepted (libzmq's own limit is 255).
    public static var maxIdentityBytes: Int { 255 }

    /// What the core was configured with.
    public let settings: Settings
    private let counters: Counters
    private let transmit: ([UInt8], String, Outgoing) -> SendOutcome

    /// The current epoch.
    public private(set) var epoch: UInt64
    /// The next sequence number of this epoch (frames numbered so far in it).
    public private(set) var nextSeq: UInt64 = 0
    /// Frames numbered over all epochs.
    public private(set) var numbered = 0
    private var phase = Phase.running
    private var endSent = false
    /// Live pacing's leaky one-frame queue.
    private var held: Outgoing?
    /// A frame that must go to a worker before anything else is read (unpaced frames; seq 0 of a timed source).
    private var waiting: Outgoing?
    /// A frame read ahead of its time (timed pacing), not yet numbered.
    private var upcoming: (frame: ReadFrame, dueNs: UInt64)?
    /// Dropped frames not yet reported.
    private var skipRun: (first: UInt64, count: UInt64, captureTimeUs: Int64)?
    private var lastHelloNs: UInt64
    private var lastPruneNs: UInt64 = 0
    private var framesRead: UInt64 = 0
    private var timelineStartNs: UInt64?
    private var firstMediaTime: Double?
    private var lastOffsetSeconds = 0.0
    private var rateLimit: RateLimit?
    private var credits: CreditTable
    private var statistics: CaptureStatistics
    private var lastWarningNs: [String: UInt64] = [:]
    private var refusedSinceWarning: [String: UInt64] = [:]

    /// - Parameter transmit: sends a frame to a connection (routing id, its worker id for logs, the frame).
    public init(
        settings: Settings, counters: Counters, at now: Instant, transmit: @escaping ([UInt8], String, Outgoing) -> SendOutcome
    ) {
        self.settings = settings
        self.counters = counters
        self.transmit = transmit
        epoch = settings.epoch
        lastHelloNs = now.monotonicNs
        rateLimit = settings.maxFPS.flatMap { $0 > 0 && $0.isFinite ? RateLimit(maxFPS: $0) : nil }
        credits = CreditTable(capacity: settings.maxWorkers, lifetimeNs: settings.creditLifetimeNs)
        statistics = CaptureStatistics(now: now.monotonicNs)
    }

    // MARK: Inputs

    /// The node starts: the first hello.
    public mutating func start(at now: Instant) -> [Output] {
        var outputs: [Output] = []
        hello(at: now, into: &outputs)
        return outputs
    }

    /// A Ready from connection `identity`: a credit, or a counted refusal. A held or waiting frame goes out at once.
    public mutating func ready(_ ready: Ready, from identity: [UInt8], at now: Instant) -> [Output] {
        var outputs: [Output] = []
        guard ready.version == Wire.version else {
            counters.add("ready_malformed")
            return outputs
        }
        guard (1...Self.maxIdentityBytes).contains(identity.count) else {
            refuse("ready_refused_identity", "a Ready with an unusable routing identity was ignored", at: now, into: &outputs)
            return outputs
        }
        var worker = ready.worker
        if worker.utf8.count > Self.maxWorkerIDBytes {
            worker = String(decoding: worker.utf8.prefix(Self.maxWorkerIDBytes), as: UTF8.self)
            counters.add("ready_worker_id_truncated")
        }
        switch credits.renew(identity, worker: worker, at: now.monotonicNs) {
        case .granted, .renewed: break
        case .refusedFull:
            refuse(
                "credits_refused_cap", "a worker connection was refused a credit: --max-workers \(credits.capacity) connections hold one",
                at: now, into: &outputs)
            return outputs
        }
        sendPending(at: now, into: &outputs)
        settleEnding(at: now, into: &outputs)
        return outputs
    }

    /// A Ready that did not parse.
    public mutating func malformedReady(at now: Instant) -> [Output] {
        counters.add("ready_malformed")
        return []
    }

    /// The shell read a frame from the source (when ``next(at:)`` said ``Step/read``).
    public mutating func frameRead(_ frame: ReadFrame, at now: Instant) -> [Output] {
        var outputs: [Output] = []
        guard phase == .running else { return outputs }
        framesRead += 1
        if case .timed(let fps, let followsMediaTime) = settings.pacing {
            // Due at its place on the source's timeline: its presentation time, or its index at the rate.
            let start = timelineStartNs ?? now.monotonicNs
            timelineStartNs = start
            if firstMediaTime == nil { firstMediaTime = frame.mediaTimeSeconds }
            var offset = Double(framesRead - 1) / fps
            if followsMediaTime, let time = frame.mediaTimeSeconds, let first = firstMediaTime { offset = time - first }
            if !offset.isFinite || offset < lastOffsetSeconds { offset = lastOffsetSeconds }  // never back in time
            lastOffsetSeconds = offset
            let due = start.addingClamped(Self.nanoseconds(offset))
            if due > now.monotonicNs {
                upcoming = (frame, due)
                return outputs
            }
        }
        number(frame, at: now, into: &outputs)
        return outputs
    }

    /// The source has no more frames. A held frame may still go within one frame interval.
    public mutating func sourceEnded(at now: Instant) -> [Output] {
        var outputs: [Output] = []
        guard phase == .running else { return outputs }
        beginEnding(at: now, into: &outputs)
        return outputs
    }

    /// The camera disappeared: what was held is dropped, the epoch ends (`StreamEnd`).
    public mutating func sourceLost(at now: Instant) -> [Output] {
        var outputs: [Output] = []
        guard phase != .finished, phase != .lost else { return outputs }
        counters.add("camera_lost")
        dropUnsent(into: &outputs)
        sendEnd(into: &outputs)
        phase = .lost
        return outputs
    }

    /// The camera is back: a new epoch (greater than the last, at least the wall clock), from seq 0, announced. After
    /// epoch 2^64−1 there is none: the node finishes.
    public mutating func sourceBack(at now: Instant) -> [Output] {
        var outputs: [Output] = []
        guard phase == .lost else { return outputs }
        guard epoch < .max else {
            // No greater epoch exists: the stream cannot start again.
            outputs.append(.log(.error, "the camera is back, but the epoch is 2^64-1 and no greater one exists: the stream ends", [:]))
            phase = .finished
            return outputs
        }
        epoch = max(UInt64(clamping: now.wallUs), epoch + 1)
        nextSeq = 0
        endSent = false
        phase = .running
        counters.add("camera_reopened")
        outputs.append(.log(.notice, "camera back: a new epoch begins", ["epoch": "\(epoch)"]))
        hello(at: now, into: &outputs)
        return outputs
    }

    /// Time passed: a frame read ahead may be due, expired credits go, hellos and statistics are sent when due,
    /// and an ending stream finishes.
    public mutating func tick(at now: Instant) -> [Output] {
        var outputs: [Output] = []
        if let frame = upcoming, frame.dueNs <= now.monotonicNs, phase == .running {
            upcoming = nil
            number(frame.frame, at: now, into: &outputs)
        }
        if now.monotonicNs.saturatingDistance(from: lastPruneNs) >= Self.pruneIntervalNs {
            // At most every 100 ms: a scan of up to --max-workers credits.
            lastPruneNs = now.monotonicNs
            let expired = credits.removeExpired(at: now.monotonicNs)
            if expired > 0 { counters.add("credits_expired", UInt64(expired)) }
        }
        if phase != .lost, phase != .finished, now.monotonicNs.saturatingDistance(from: lastHelloNs) >= settings.helloIntervalNs {
            flushSkips(into: &outputs)
            hello(at: now, into: &outputs)
        }
        if settings.statisticsIntervalNs > 0, now.monotonicNs.saturatingDistance(from: statistics.windowStart) >= settings.statisticsIntervalNs {
            let report = statistics.report(counters: counters, now: now.monotonicNs)
            outputs.append(.log(.info, "capture statistics", ["stream": "\(settings.stream)", "figures": "\(report)"]))
        }
        if case .ending(let deadline) = phase, now.monotonicNs >= deadline, let frame = held {
            held = nil
            dropAtSource(frame, into: &outputs)
        }
        settleEnding(at: now, into: &outputs)
        return outputs
    }

    /// The node stops (a signal, or an error): whatever was not sent is reported skipped, and the stream ends.
    public mutating func stop(at now: Instant) -> [Output] {
        var outputs: [Output] = []
        dropUnsent(into: &outputs)
        sendEnd(into: &outputs)
        phase = .finished
        return outputs
    }

    // MARK: Queries

    /// What the shell should do next.
    public func next(at now: Instant) -> Step {
        switch phase {
        case .finished: return .finished
        case .lost: return .wait(untilNs: nil)
        case .ending(let deadline):
            if waiting != nil { return .wait(untilNs: nil) }
            return held == nil ? .finished : .wait(untilNs: deadline)
        case .running:
            if waiting != nil { return .wait(untilNs: nil) }
            if let upcoming { return .wait(untilNs: upcoming.dueNs) }
            if settings.pacing == .unpaced, framesRead > 0, credits.liveCount(at: now.monotonicNs) == 0 { return .wait(untilNs: nil) }
            return .read
        }
    }

    /// Whether a frame is held for the next idle worker (the shell then looks for Readys more often).
    public var holdsFrame: Bool { held != nil }

    /// Worker connections holding a live credit.
    public func waitingWorkers(at now: Instant) -> Int { credits.liveCount(at: now.monotonicNs) }

    /// Worker connections holding a credit as of the last tick (expired ones go at most 100 ms late); O(1), for a
    /// gauge.
    public var creditsHeld: Int { credits.count }

    // MARK: Decisions

    private mutating func number(_ frame: ReadFrame, at now: Instant, into outputs: inout [Output]) {
        counters.add("frames_captured")
        let captureTime = frame.captureTimeUs ?? now.wallUs
        if var limit = rateLimit {
            let keep = limit.keep(timeMicroseconds: captureTime)
            rateLimit = limit
            guard keep else {
                counters.add("frames_over_max_fps")
                return
            }
        }
        var header = FrameHeader()
        header.version = Wire.version
        header.stream = settings.stream
        header.epoch = epoch
        header.seq = nextSeq
        header.captureTimeUs = captureTime
        header.width = UInt32(clamping: frame.width)
        header.height = UInt32(clamping: frame.height)
        header.orientation = frame.orientation
        if let detection = settings.detection { header.settings = detection }
        if settings.pacing != .unpaced, settings.maxAgeMilliseconds > 0 {
            header.deadlineUs = captureTime.addingClamped(Int64(clamping: settings.maxAgeMilliseconds).multipliedClamped(by: 1000))
        }
        nextSeq += 1
        numbered += 1
        let outgoing = Outgoing(header: header, payload: frame.payload)
        if let previous = held {
            // The held frame's last chance: a worker whose Ready came with the new frame takes it; else it is dropped.
            held = nil
            if !send(previous, at: now, into: &outputs) { dropAtSource(previous, into: &outputs) }
        }
        switch settings.pacing {
        case .unpaced:
            if !send(outgoing, at: now, into: &outputs) { waiting = outgoing }
        case .timed where header.seq == 0:
            if send(outgoing, at: now, into: &outputs) { timelineStartNs = now.monotonicNs } else { waiting = outgoing }
        case .timed, .live:
            if !send(outgoing, at: now, into: &outputs) { held = outgoing }
        }
        if let maxFrames = settings.maxFrames, numbered >= maxFrames { beginEnding(at: now, into: &outputs) }
    }

    /// Sends to the connection whose live credit is oldest; false when no credit is left.
    private mutating func send(_ frame: Outgoing, at now: Instant, into outputs: inout [Output]) -> Bool {
        var frame = frame
        frame.header.sentTimeUs = now.wallUs
        while true {
            let (credit, expired) = credits.take(at: now.monotonicNs)
            if expired > 0 { counters.add("credits_expired", UInt64(expired)) }  // a dead or unreachable worker
            guard let credit else { return false }
            switch transmit(credit.identity, credit.worker, frame) {
            case .sent:
                counters.add("frames_sent")
                flushSkips(into: &outputs)
                return true
            case .full: counters.add("worker_full")
            case .gone: counters.add("worker_gone")
            }
        }
    }

    /// Offers the waiting or held frame to the credits there are.
    private mutating func sendPending(at now: Instant, into outputs: inout [Output]) {
        if var frame = waiting {
            // Seq 0 of a file starts the timeline when it is sent: it becomes due (and is stamped) now, not when it was
            // read before the wait for the first worker; --max-fps books its schedule from here too.
            let startsTimeline = frame.header.seq == 0 && settings.pacing.isTimed
            if startsTimeline { restamp(&frame.header, at: now) }
            if send(frame, at: now, into: &outputs) {
                waiting = nil
                if startsTimeline { timelineStartNs = now.monotonicNs }  // the timeline starts now
            }
        }
        if let frame = held, send(frame, at: now, into: &outputs) { held = nil }
    }

    /// Stamps a frame that waited for its first worker with the time it goes out (a file's frames are stamped when they
    /// are due), with its deadline, and restarts the --max-fps schedule from it.
    private mutating func restamp(_ header: inout FrameHeader, at now: Instant) {
        header.captureTimeUs = now.wallUs
        if header.deadlineUs != 0 {
            header.deadlineUs = now.wallUs.addingClamped(Int64(clamping: settings.maxAgeMilliseconds).multipliedClamped(by: 1000))
        }
        rateLimit?.restart(atMicroseconds: now.wallUs)
    }

    /// A numbered frame no worker took: counted, and added to the run of skips to report (a new run if it does not
    /// follow the pending one).
    private mutating func dropAtSource(_ frame: Outgoing, into outputs: inout [Output]) {
        counters.add("frames_dropped_at_source")
        counters.add("frames_dropped_no-worker")
        if let run = skipRun, run.first.addingClamped(run.count) == frame.header.seq {
            skipRun?.count += 1
        } else {
            flushSkips(into: &outputs)
            skipRun = (frame.header.seq, 1, frame.header.captureTimeUs)
        }
    }

    /// Drops the held and waiting frames at the source and forgets the one read ahead.
    private mutating func dropUnsent(into outputs: inout [Output]) {
        if let frame = held { dropAtSource(frame, into: &outputs) }
        if let frame = waiting { dropAtSource(frame, into: &outputs) }
        held = nil
        waiting = nil
        upcoming = nil
    }

    private mutating func flushSkips(into outputs: inout [Output]) {
        guard let run = skipRun else { return }
        var skipped = Skipped()
        skipped.stream = settings.stream
        skipped.epoch = epoch
        skipped.firstSeq = run.first
        skipped.count = run.count
        skipped.reason = "no-worker"
        skipped.captureTimeUs = run.captureTimeUs
        outputs.append(.control(.skipped(skipped)))
        skipRun = nil
    }

    private mutating func hello(at now: Instant, into outputs: inout [Output]) {
        var hello = Hello()
        hello.role = .capture
        hello.nodeID = settings.nodeID
        hello.stream = settings.stream
        hello.epoch = epoch
        hello.frameEndpoint = settings.frameEndpoint
        hello.nextSeq = nextSeq
        hello.curvePublicKey = settings.curvePublicKey
        hello.previewEndpoint = settings.previewEndpoint
        outputs.append(.control(.hello(hello)))
        lastHelloNs = now.monotonicNs
    }

    private mutating func sendEnd(into outputs: inout [Output]) {
        flushSkips(into: &outputs)
        guard !endSent else { return }
        var end = StreamEnd()
        end.stream = settings.stream
        end.epoch = epoch
        end.nextSeq = nextSeq
        outputs.append(.control(.end(end)))
        endSent = true
    }

    private mutating func beginEnding(at now: Instant, into outputs: inout [Output]) {
        let interval: Double = if case .timed(let fps, _) = settings.pacing { 1 / fps } else { 1.0 / 30 }
        upcoming = nil
        phase = .ending(deadlineNs: now.monotonicNs.addingClamped(Self.nanoseconds(interval)))
        settleEnding(at: now, into: &outputs)
    }

    /// An ending stream with nothing left to send ends: `StreamEnd`, finished.
    private mutating func settleEnding(at now: Instant, into outputs: inout [Output]) {
        guard case .ending = phase, held == nil, waiting == nil else { return }
        sendEnd(into: &outputs)
        phase = .finished
    }

    /// Counts a refused Ready and logs it at most once per warning interval, with how many since the last line.
    private mutating func refuse(_ counter: String, _ message: String, at now: Instant, into outputs: inout [Output]) {
        counters.add(counter)
        refusedSinceWarning[counter, default: 0] += 1
        if let last = lastWarningNs[counter], now.monotonicNs.saturatingDistance(from: last) < settings.warningIntervalNs { return }
        outputs.append(.log(.warning, message, ["refused": "\(refusedSinceWarning[counter] ?? 0)", "counter": "\(counter)"]))
        lastWarningNs[counter] = now.monotonicNs
        refusedSinceWarning[counter] = 0
    }

    /// Seconds as nanoseconds, clamped to 0...2^62 (never traps on a huge or odd value).
    public static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return UInt64(min(seconds * 1e9, 4.6e18))
    }
}

extension UInt64 {
    /// `self + other`, or `UInt64.max` instead of overflowing.
    public func addingClamped(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }

    /// `self - earlier`, or 0 when `earlier` is later.
    func saturatingDistance(from earlier: UInt64) -> UInt64 { self >= earlier ? self - earlier : 0 }
}

extension Int64 {
    /// `self + other`, clamped to the range instead of overflowing.
    public func addingClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self * other`, clamped to the range instead of overflowing.
    func multipliedClamped(by other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) == (other < 0) ? .max : .min) : product
    }
}
