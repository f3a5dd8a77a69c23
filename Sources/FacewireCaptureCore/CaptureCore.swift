import FacewireVocabulary
import FacewireProtocol

/// Every decision a capture node makes, without sockets or clocks: when a frame is due, how it is numbered, how many
/// worker threads it asks the collector for and which assigned thread gets it, what is held, dropped and reported,
/// and when the collector hears a hello or the stream's end (SPEC 3, 7.1, 8).
///
/// The shell (``CaptureNode``) reads the source and the sockets and feeds what happened in, each input with the time
/// it happened (``Instant``): a frame read, a Ready (a thread attaching), an Assignment from the collector, the end or
/// loss of the source, or just a tick. The core answers
/// each with an ``Output`` (the shared ``Effects``: frames to send, control messages for the collector, counters, log
/// lines); the shell reports how each frame's send went (``transmitted(_:at:)``) before its next input. ``next(at:)``
/// tells the shell what to do next: read a frame, wait (for a Ready or a time), or finish.
///
/// Invariants (tested): every numbered sequence is sent once or reported skipped once, sequences are gap-free per
/// epoch, and no frame goes to a connection without a live credit (an assignment for an attached thread).
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
        /// Set: frames carry a media time (SPEC 6.1; files, folders, still images), their presentation time, or without
        /// one their index / this rate (`--fps N`, else the file's rate or 30). nil: none (live sources). Must be > 0.
        public var mediaFPS: Double?
        /// `--frames`: frames numbered over all epochs before the stream ends.
        public var maxFrames: Int?
        /// `--max-age`: live and timed frames carry `deadline_us = capture_time_us + maxAge`; 0: none.
        public var maxAgeMilliseconds: Int = 2000
        /// The stream's detection settings, sent in every header.
        public var detection: DetectionSettings?
        /// `--max-workers`: worker threads attached at once.
        public var maxWorkers: Int = CaptureCore.defaultMaxWorkers
        /// An assignment not used for this long is handed back (SPEC 3.2).
        public var creditLifetimeNs: UInt64 = 3_000_000_000
        /// An attachment not renewed by a Ready for this long is forgotten (SPEC 3.1: threads renew it every 5 s, and
        /// at once when the collector announces this node's new epoch).
        public var attachmentLifetimeNs: UInt64 = 15_000_000_000
        /// Timed pacing: the timeline starts this long after seq 0 is sent, so seq 1 and every later frame come that much
        /// later. The shell picks a random fraction of a frame interval: files started together (several in one
        /// process, or a fleet waiting for its first worker, whose arrival sends every seq 0 at once) would otherwise
        /// send their frames in step, in bursts the workers queue, where independent cameras fall at random phases.
        public var timelinePhaseNs: UInt64 = 0
        /// `--weight`: the stream's share of the workers under overload, relative to other streams (SPEC 3.3).
        public var weight: Double = 1
        /// Unpaced pacing: threads asked for at once at most (each takes one frame).
        public var unpacedWindow: Int = 64
        /// A request for threads is repeated this often while the node wants one (SPEC 3.2).
        public var requestIntervalNs: UInt64 = 1_000_000_000
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
        /// The source's presentation time (timed pacing by media time; the header's `media_time_us`).
        public var mediaTimeSeconds: Double?
        /// Its place on the media timeline, µs from the source's first frame, set when it is read (nil: none).
        var mediaTimeUs: Int64?

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

    /// How a send went (SPEC 3.2: a failed send consumes the credit and hands its thread back; the next one is tried).
    public enum SendOutcome: Sendable, Equatable {
        case sent
        /// The connection's pipe is full (`EAGAIN`).
        case full
        /// The peer is gone (`EHOSTUNREACH`).
        case gone
    }

    /// What the shell does for the core besides counting and logging.
    public enum Action {
        /// Send a frame on the frame socket to a connection whose credit the core took. The shell reports how it went
        /// (``transmitted(_:at:)``) before it hands the core anything else.
        case send(Transmission)
        /// A control message for the collector.
        case control(Envelope.OneOf_Body)
    }

    /// A frame for one connection (an attached thread the collector assigned).
    public struct Transmission {
        /// The connection's routing identity.
        public var identity: [UInt8]
        /// Its worker id (bounded), for logs.
        public var worker: String
        /// The frame, `sent_time_us` set.
        public var frame: Outgoing
    }

    /// What one input asks the shell to do: the shared ``Effects`` shape with the capture node's actions.
    public typealias Output = Effects<Action>

    /// What the shell should do next.
    public enum Step: Equatable, Sendable {
        /// Read the next frame from the source (for a live source: wait for it).
        case read
        /// Wait for a Ready until the monotonic time given (nil: until one comes), ticking at least every 100 ms.
        case wait(untilNs: UInt64?)
        /// The stream is over: stop.
        case finished
    }

    /// Frames not yet sent: each phase that can have them carries them.
    struct Unsent {
        /// Live pacing's leaky one-frame queue.
        var held: Outgoing?
        /// A frame that must go to a worker before anything else is read (unpaced frames; seq 0 of a timed source).
        var waiting: Outgoing?
        /// A frame read ahead of its time (timed pacing), not yet numbered.
        var upcoming: (frame: ReadFrame, dueNs: UInt64)?

        var isEmpty: Bool { held == nil && waiting == nil && upcoming == nil }
    }

    /// Where the stream is; each phase carries its own data.
    enum Phase {
        /// Frames are read and numbered.
        case running(Unsent)
        /// The source ended (or `--frames` was reached): a held frame may still go until `deadlineNs` (nothing is read
        /// ahead any more).
        case ending(deadlineNs: UInt64, Unsent)
        /// The camera is gone; the epoch ended (its `StreamEnd` was sent), nothing is unsent.
        case lost
        /// The stream is over (its `StreamEnd` was sent), nothing is unsent.
        case finished
    }

    /// What becomes of a frame when its send is refused and no other credit is left.
    enum Fallback {
        /// It was a held frame's last chance: dropped at the source.
        case drop
        /// It is held for the next Ready (live and timed pacing).
        case hold
        /// It waits for the next Ready before anything else is read; seq 0 of a file starts the timeline when it goes.
        case wait(startsTimeline: Bool)
    }

    /// Where a file's frames fall due (timed pacing).
    struct Timeline {
        /// Frames read from the source, over all epochs.
        var framesRead: UInt64 = 0
        /// When seq 0 went out (the timeline's origin), once it has.
        var startNs: UInt64?
        /// The first frame's presentation time.
        var firstMediaTime: Double?
        /// The last media time handed out (seconds from the first frame), so that none goes back.
        var lastMediaSeconds = 0.0
        /// The last offset handed out, so that no frame is due before the one read before it.
        var lastOffsetSeconds = 0.0
    }

    /// What the node told the collector about the threads it wants (SPEC 3.2), and what it has to hand back.
    struct Demand {
        /// The highest `Assignment.number` received.
        var seen: UInt64 = 0
        /// `wanted` of the last request sent (nil: none sent yet).
        var lastWanted: UInt32?
        var lastRequestNs: UInt64 = 0
        /// Assigned threads not used: no frame for them (handed back in the next request).
        var returned: [String] = []
        /// Assigned threads not attached here, or whose send failed.
        var unreachable: [String] = []
    }

    /// When periodic things were last done, and the refused Readys not yet logged.
    struct Housekeeping {
        var lastHelloNs: UInt64
        var lastPruneNs: UInt64 = 0
        var lastWarningNs: [String: UInt64] = [:]
        var refusedSinceWarning: [String: UInt64] = [:]
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

    /// The current epoch.
    public private(set) var epoch: UInt64
    /// The next sequence number of this epoch (frames numbered so far in it).
    public private(set) var nextSeq: UInt64 = 0
    /// Frames numbered over all epochs.
    public private(set) var numbered = 0
    private(set) var phase = Phase.running(Unsent())
    /// Sends handed to the shell whose outcome it has not reported yet, oldest first (empty between inputs).
    private var inFlight: [(frame: Outgoing, fallback: Fallback, worker: String)] = []
    /// Dropped frames not yet reported.
    private var skipRun: (first: UInt64, count: UInt64, captureTimeUs: Int64)?
    private var timeline = Timeline()
    private var housekeeping: Housekeeping
    private var rateLimit: RateLimit?
    private var credits: CreditTable
    private var attachments: Attachments
    private var demand = Demand()
    private var statistics: CaptureStatistics

    public init(settings: Settings, at now: Instant) {
        self.settings = settings
        epoch = settings.epoch
        housekeeping = Housekeeping(lastHelloNs: now.monotonicNs)
        rateLimit = settings.maxFPS.flatMap { $0 > 0 && $0.isFinite ? RateLimit(maxFPS: $0) : nil }
        credits = CreditTable(capacity: settings.maxWorkers, lifetimeNs: settings.creditLifetimeNs)
        attachments = Attachments(capacity: settings.maxWorkers, lifetimeNs: settings.attachmentLifetimeNs)
        statistics = CaptureStatistics(now: now.monotonicNs)
    }

    // MARK: Inputs

    /// The node starts: the first hello.
    public mutating func start(at now: Instant) -> Output {
        var out = Output()
        hello(at: now, into: &out)
        return out
    }

    /// A Ready from connection `identity`: the thread it names is attached here (or refused, counted).
    public mutating func ready(_ ready: Ready, from identity: [UInt8], at now: Instant) -> Output {
        var out = Output()
        guard ready.version == Wire.dispatchVersion else {
            return malformedReady(ProtocolError(.unsupportedVersion, "Ready version \(ready.version)"), at: now)
        }
        guard (1...Self.maxIdentityBytes).contains(identity.count) else {
            refuse("ready_refused_identity", "a Ready with an unusable routing identity was ignored", at: now, into: &out)
            return out
        }
        var worker = ready.worker
        if worker.utf8.count > Self.maxWorkerIDBytes {
            worker = String(decoding: worker.utf8.prefix(Self.maxWorkerIDBytes), as: UTF8.self)
            out.count("ready_worker_id_truncated")
        }
        switch attachments.attach(worker, identity: identity, at: now.monotonicNs) {
        case .attached: out.count("workers_attached")
        case .renewed: break
        case .moved: out.count("workers_moved")
        case .duplicate:
            refuse(
                "workers_duplicate_id", "two worker threads send Readys with the same id (SPEC 3.1: ids must be unique); the latest wins",
                at: now, into: &out, ["worker": worker])
        case .refusedFull:
            refuse(
                "attachments_refused_cap", "a worker thread was refused: --max-workers \(attachments.capacity) threads are attached",
                at: now, into: &out)
        }
        syncDemand(at: now, into: &out)
        return out
    }

    /// An Assignment from the collector: the thread it names gets the frame waiting or held (or the next one read,
    /// unpaced); one this node cannot use is handed back in the next request.
    public mutating func assigned(_ assignment: Assignment, at now: Instant) -> Output {
        var out = Output()
        out.count("assignments_received")
        demand.seen = max(demand.seen, assignment.number)
        let name = assignment.worker
        guard name.utf8.count <= Self.maxWorkerIDBytes else {
            // No thread is known by a longer name (a Ready's is cut to it): not handed back, which would echo it.
            out.count("assignments_rejected_worker")
            syncDemand(at: now, into: &out)
            return out
        }
        if let identity = attachments.identity(of: name, at: now.monotonicNs) {
            if wantsThreads, credits.renew(identity, worker: name, at: now.monotonicNs) == .granted {
                sendUnsent(at: now, into: &out)
                settleEnding(at: now, into: &out)
            } else {
                out.count("assignments_returned")
                handBack(name, unreachable: false)
            }
        } else {
            // Not attached (yet: a thread's Idle can reach the collector before its Ready reaches this node): handed
            // back as unused, which keeps it from this node only briefly.
            out.count("assignments_unattached")
            handBack(name, unreachable: false)
        }
        syncDemand(at: now, into: &out)
        return out
    }

    /// A Ready that did not parse, or whose version is not 2: a thread of another dispatch protocol is refused by name
    /// (`ready_refused_version`, logged at most once per warning interval), anything else is `ready_malformed`.
    public mutating func malformedReady(_ error: ProtocolError, at now: Instant) -> Output {
        var out = Output()
        if error.code == .unsupportedVersion {
            refuse(
                "ready_refused_version", "a worker thread of another dispatch protocol was refused (version 1 is credits): upgrade it",
                at: now, into: &out)
        } else {
            out.count("ready_malformed")
        }
        return out
    }

    /// How the oldest send not yet reported went (SPEC 3.2: a refused send consumes the credit, its thread is handed
    /// back as unreachable, and the next credit is tried; with none left, the frame is held, waits or is dropped at the source as its pacing says).
    public mutating func transmitted(_ outcome: SendOutcome, at now: Instant) -> Output {
        var out = Output()
        guard !inFlight.isEmpty else { return out }
        let (frame, fallback, worker) = inFlight.removeFirst()
        switch outcome {
        case .sent:
            out.count("frames_sent")
            // From its capture time to its send (mostly the wait for a thread): the statistics' mean.
            let waited = frame.header.sentTimeUs.subtractingReportingOverflow(frame.header.captureTimeUs)
            out.count("source_wait_us", waited.overflow || waited.partialValue < 0 ? 0 : UInt64(waited.partialValue))
            flushSkips(into: &out)
            // The timeline starts now, shifted by the node's phase.
            if case .wait(startsTimeline: true) = fallback { timeline.startNs = now.monotonicNs.addingClamped(settings.timelinePhaseNs) }
        case .full, .gone:
            out.count(outcome == .full ? "worker_full" : "worker_gone")
            handBack(worker, unreachable: true)
            dispatch(frame, fallback: fallback, at: now, into: &out)
        }
        settleEnding(at: now, into: &out)
        syncDemand(at: now, into: &out)
        return out
    }

    /// Carries out the sends of `output` with `transmit` and reports each outcome back to the core, until no send is
    /// left: every output in order, `output` first, then the core's answers to the reports (which may hold the next
    /// sends). What a shell does with each input's output before anything else; the rest (counts, logs, control
    /// messages) is the shell's to carry out.
    public mutating func settle(_ output: Output, at now: () -> Instant, transmit: (Transmission) -> SendOutcome) -> [Output] {
        var outputs = [output]
        var next = 0
        while next < outputs.count {
            for case .send(let transmission) in outputs[next].actions {
                outputs.append(transmitted(transmit(transmission), at: now()))
            }
            next += 1
        }
        return outputs
    }

    /// The shell read a frame from the source (when ``next(at:)`` said ``Step/read``).
    public mutating func frameRead(_ frame: ReadFrame, at now: Instant) -> Output {
        var out = take(frame, at: now)
        syncDemand(at: now, into: &out)
        return out
    }

    /// The frame's media time, seconds from the source's first frame (SPEC 6.1): its presentation time, else its index
    /// at ``Settings/mediaFPS``; never before the previous frame's, never infinite; nil when it has neither.
    private mutating func mediaSeconds(of frame: ReadFrame) -> Double? {
        var offset: Double
        if let time = frame.mediaTimeSeconds, let first = timeline.firstMediaTime {
            offset = time - first
        } else if let rate = settings.mediaFPS {
            offset = Double(timeline.framesRead - 1) / rate
        } else {
            return nil
        }
        // At most 100 years: the µs fit an Int64 with room, whatever a broken file says.
        if !offset.isFinite || offset < timeline.lastMediaSeconds { offset = timeline.lastMediaSeconds }
        offset = min(offset, Self.maxMediaSeconds)
        timeline.lastMediaSeconds = offset
        return offset
    }

    /// The largest media time a frame carries: 100 years (SPEC 6.1).
    public static var maxMediaSeconds: Double { 100 * 365.25 * 86_400 }

    private mutating func take(_ frame: ReadFrame, at now: Instant) -> Output {
        var frame = frame
        var out = Output()
        guard case .running(var unsent) = phase else { return out }
        timeline.framesRead += 1
        if timeline.firstMediaTime == nil { timeline.firstMediaTime = frame.mediaTimeSeconds }
        let media = mediaSeconds(of: frame)
        if settings.mediaFPS != nil, let media { frame.mediaTimeUs = Int64(exactly: (media * 1_000_000).rounded()) ?? .max }
        if case .timed(let fps, let followsMediaTime) = settings.pacing {
            // Due at its place on the source's timeline: its presentation time, or its index at the rate.
            let start = timeline.startNs ?? now.monotonicNs
            timeline.startNs = start
            var offset = Double(timeline.framesRead - 1) / fps
            if followsMediaTime, frame.mediaTimeSeconds != nil, let media { offset = media }
            if !offset.isFinite || offset < timeline.lastOffsetSeconds { offset = timeline.lastOffsetSeconds }  // never back in time
            timeline.lastOffsetSeconds = offset
            let due = start.addingClamped(Self.nanoseconds(offset))
            if due > now.monotonicNs {
                unsent.upcoming = (frame, due)
                phase = .running(unsent)
                return out
            }
        }
        number(frame, at: now, into: &out)
        return out
    }

    /// The source has no more frames. A held frame may still go within one frame interval.
    public mutating func sourceEnded(at now: Instant) -> Output {
        var out = Output()
        guard case .running = phase else { return out }
        beginEnding(at: now, into: &out)
        syncDemand(at: now, into: &out)
        return out
    }

    /// The camera disappeared: what was held is dropped, the epoch ends (`StreamEnd`).
    public mutating func sourceLost(at now: Instant) -> Output {
        var out = Output()
        switch phase {
        case .running, .ending:
            out.count("camera_lost")
            dropUnsent(into: &out)
            sendEnd(into: &out)
            phase = .lost
        case .lost, .finished: break
        }
        syncDemand(at: now, into: &out)
        return out
    }

    /// The camera is back: a new epoch (greater than the last, at least the wall clock), from seq 0, announced. After
    /// epoch 2^64−1 there is none: the node finishes.
    public mutating func sourceBack(at now: Instant) -> Output {
        var out = Output()
        guard case .lost = phase else { return out }
        guard epoch < .max else {
            // No greater epoch exists: the stream cannot start again.
            out.log(.error, "the camera is back, but the epoch is 2^64-1 and no greater one exists: the stream ends")
            phase = .finished
            return out
        }
        epoch = max(UInt64(clamping: now.wallUs), epoch + 1)
        nextSeq = 0
        phase = .running(Unsent())
        out.count("camera_reopened")
        out.log(.notice, "camera back: a new epoch begins", ["epoch": "\(epoch)"])
        hello(at: now, into: &out)
        syncDemand(at: now, into: &out)
        return out
    }

    /// Time passed: a frame read ahead may be due, expired credits go, hellos and statistics are sent when due, and an
    /// ending stream finishes. `totals` are the node's counters, read only when a statistics line is due.
    public mutating func tick(at now: Instant, totals: @autoclosure () -> [String: UInt64] = [:]) -> Output {
        var out = Output()
        if case .running(var unsent) = phase, let frame = unsent.upcoming, frame.dueNs <= now.monotonicNs {
            unsent.upcoming = nil
            phase = .running(unsent)
            number(frame.frame, at: now, into: &out)
        }
        if now.monotonicNs.saturatingDistance(from: housekeeping.lastPruneNs) >= Self.pruneIntervalNs {
            // At most every 100 ms: a scan of up to --max-workers credits.
            housekeeping.lastPruneNs = now.monotonicNs
            let expired = credits.removeExpired(at: now.monotonicNs)
            if !expired.isEmpty { out.count("credits_expired", UInt64(expired.count)) }
            for worker in expired { handBack(worker, unreachable: false) }
            let detached = attachments.removeExpired(at: now.monotonicNs)
            if detached > 0 { out.count("attachments_expired", UInt64(detached)) }
        }
        switch phase {
        case .running, .ending:
            if now.monotonicNs.saturatingDistance(from: housekeeping.lastHelloNs) >= settings.helloIntervalNs {
                flushSkips(into: &out)
                hello(at: now, into: &out)
            }
        case .lost, .finished: break
        }
        if settings.statisticsIntervalNs > 0, now.monotonicNs.saturatingDistance(from: statistics.windowStart) >= settings.statisticsIntervalNs {
            let report = statistics.report(totals: totals(), now: now.monotonicNs)
            out.log(.info, "capture statistics", ["stream": "\(settings.stream)", "figures": "\(report)"])
        }
        if case .ending(let deadline, var unsent) = phase, now.monotonicNs >= deadline, let frame = unsent.held {
            unsent.held = nil
            phase = .ending(deadlineNs: deadline, unsent)
            dropAtSource(frame, into: &out)
        }
        settleEnding(at: now, into: &out)
        syncDemand(at: now, into: &out)
        return out
    }

    /// The collector that is active changed (failover, SPEC.md 18): the new one has not heard from this node. It gets a
    /// hello now (with the next sequence: frames from it on were sent after the change), a request for threads afresh
    /// (it numbers its assignments from 1), and a finished stream's end again (the old one may have died with it).
    public mutating func collectorChanged(at now: Instant) -> Output {
        var out = Output()
        out.count("collector_changes")
        demand.seen = 0
        demand.lastWanted = nil
        switch phase {
        case .running, .ending: hello(at: now, into: &out)
        case .finished: sendEnd(into: &out)
        case .lost: break
        }
        syncDemand(at: now, into: &out)
        return out
    }

    /// The node stops (a signal, or an error): whatever was not sent is reported skipped, and the stream ends.
    public mutating func stop(at now: Instant) -> Output {
        var out = Output()
        switch phase {
        case .running, .ending:
            dropUnsent(into: &out)
            sendEnd(into: &out)
        case .lost, .finished: break  // the epoch's end was sent
        }
        phase = .finished
        syncDemand(at: now, into: &out)
        return out
    }

    // MARK: Queries

    /// What the shell should do next.
    public func next(at now: Instant) -> Step {
        switch phase {
        case .finished: return .finished
        case .lost: return .wait(untilNs: nil)
        case .ending(let deadline, let unsent):
            if unsent.waiting != nil { return .wait(untilNs: nil) }
            return unsent.held == nil ? .finished : .wait(untilNs: deadline)
        case .running(let unsent):
            if unsent.waiting != nil { return .wait(untilNs: nil) }
            if let upcoming = unsent.upcoming { return .wait(untilNs: upcoming.dueNs) }
            if settings.pacing == .unpaced, timeline.framesRead > 0, credits.liveCount(at: now.monotonicNs) == 0 { return .wait(untilNs: nil) }
            return .read
        }
    }

    /// Whether a frame is held for the next idle worker (the shell then looks for Readys more often).
    public var holdsFrame: Bool { unsent.held != nil }

    /// Assigned threads not used yet (live credits).
    public func waitingWorkers(at now: Instant) -> Int { credits.liveCount(at: now.monotonicNs) }

    /// Assigned threads not used yet, as of the last tick (expired ones go at most 100 ms late); O(1), for a gauge.
    public var creditsHeld: Int { credits.count }

    /// Worker threads attached (their Ready heard within the attachment lifetime, pruned every 100 ms).
    public var attachedWorkers: Int { attachments.count }

    // MARK: Decisions

    /// The unsent frames of the current phase (none once the epoch or the stream ended). Setting them outside a phase
    /// that has any is a no-op: the lost and finished phases hold nothing.
    private var unsent: Unsent {
        get {
            switch phase {
            case .running(let unsent), .ending(_, let unsent): unsent
            case .lost, .finished: Unsent()
            }
        }
        set {
            switch phase {
            case .running: phase = .running(newValue)
            case .ending(let deadline, _): phase = .ending(deadlineNs: deadline, newValue)
            case .lost, .finished: assert(newValue.isEmpty, "a frame kept after its epoch ended")
            }
        }
    }

    private mutating func number(_ frame: ReadFrame, at now: Instant, into out: inout Output) {
        out.count("frames_captured")
        let captureTime = frame.captureTimeUs ?? now.wallUs
        if var limit = rateLimit {
            let keep = limit.keep(timeMicroseconds: captureTime)
            rateLimit = limit
            guard keep else {
                out.count("frames_over_max_fps")
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
        if let media = frame.mediaTimeUs { header.mediaTimeUs = media }
        if let detection = settings.detection { header.settings = detection }
        if settings.pacing != .unpaced, settings.maxAgeMilliseconds > 0 {
            header.deadlineUs = captureTime.addingClamped(Int64(clamping: settings.maxAgeMilliseconds).multipliedClamped(by: 1000))
        }
        nextSeq += 1
        numbered += 1
        let outgoing = Outgoing(header: header, payload: frame.payload)
        if let previous = unsent.held {
            // The held frame's last chance: a worker whose Ready came with the new frame takes it; else it is dropped.
            unsent.held = nil
            dispatch(previous, fallback: .drop, at: now, into: &out)
        }
        switch settings.pacing {
        case .unpaced: dispatch(outgoing, fallback: .wait(startsTimeline: false), at: now, into: &out)
        case .timed where header.seq == 0: dispatch(outgoing, fallback: .wait(startsTimeline: true), at: now, into: &out)
        case .timed, .live: dispatch(outgoing, fallback: .hold, at: now, into: &out)
        }
        if let maxFrames = settings.maxFrames, numbered >= maxFrames { beginEnding(at: now, into: &out) }
    }

    /// Hands the frame to the connection whose live credit is oldest (the shell reports how it went); with no credit
    /// left, the frame is dropped, held or waits (`fallback`).
    private mutating func dispatch(_ frame: Outgoing, fallback: Fallback, at now: Instant, into out: inout Output) {
        var frame = frame
        frame.header.sentTimeUs = now.wallUs
        let (credit, expired) = credits.take(at: now.monotonicNs)
        if !expired.isEmpty { out.count("credits_expired", UInt64(expired.count)) }  // assignments not used in time
        for worker in expired { handBack(worker, unreachable: false) }
        guard let credit else {
            switch fallback {
            case .drop: dropAtSource(frame, into: &out)
            case .hold: unsent.held = frame
            case .wait: unsent.waiting = frame
            }
            return
        }
        inFlight.append((frame, fallback, credit.worker))
        out.act(.send(Transmission(identity: credit.identity, worker: credit.worker, frame: frame)))
    }

    /// Offers the waiting or held frame to the credits there are.
    private mutating func sendUnsent(at now: Instant, into out: inout Output) {
        if var frame = unsent.waiting {
            unsent.waiting = nil
            // Seq 0 of a file starts the timeline when it is sent: it becomes due (and is stamped) now, not when it was
            // read before the wait for the first worker; --max-fps books its schedule from here too.
            let startsTimeline = frame.header.seq == 0 && settings.pacing.isTimed
            if startsTimeline { restamp(&frame.header, at: now) }
            dispatch(frame, fallback: .wait(startsTimeline: startsTimeline), at: now, into: &out)
        }
        if let frame = unsent.held {
            unsent.held = nil
            dispatch(frame, fallback: .hold, at: now, into: &out)
        }
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
    private mutating func dropAtSource(_ frame: Outgoing, into out: inout Output) {
        out.count("frames_dropped_at_source")
        out.count("frames_dropped_no-worker")
        if let run = skipRun, run.first.addingClamped(run.count) == frame.header.seq {
            skipRun?.count += 1
        } else {
            flushSkips(into: &out)
            skipRun = (frame.header.seq, 1, frame.header.captureTimeUs)
        }
    }

    /// Drops the held and waiting frames at the source and forgets the one read ahead.
    private mutating func dropUnsent(into out: inout Output) {
        let unsent = unsent
        if let frame = unsent.held { dropAtSource(frame, into: &out) }
        if let frame = unsent.waiting { dropAtSource(frame, into: &out) }
        self.unsent = Unsent()
    }

    private mutating func flushSkips(into out: inout Output) {
        guard let run = skipRun else { return }
        var skipped = Skipped()
        skipped.stream = settings.stream
        skipped.epoch = epoch
        skipped.firstSeq = run.first
        skipped.count = run.count
        skipped.reason = "no-worker"
        skipped.captureTimeUs = run.captureTimeUs
        out.act(.control(.skipped(skipped)))
        skipRun = nil
    }

    private mutating func hello(at now: Instant, into out: inout Output) {
        var hello = Hello()
        hello.role = .capture
        hello.nodeID = settings.nodeID
        hello.stream = settings.stream
        hello.epoch = epoch
        hello.frameEndpoint = settings.frameEndpoint
        hello.nextSeq = nextSeq
        hello.curvePublicKey = settings.curvePublicKey
        hello.previewEndpoint = settings.previewEndpoint
        hello.dispatch = Wire.dispatchVersion
        out.act(.control(.hello(hello)))
        housekeeping.lastHelloNs = now.monotonicNs
    }

    /// The epoch's `StreamEnd`, after the skips not yet reported (called once per epoch, as its phase ends).
    private mutating func sendEnd(into out: inout Output) {
        flushSkips(into: &out)
        var end = StreamEnd()
        end.stream = settings.stream
        end.epoch = epoch
        end.nextSeq = nextSeq
        out.act(.control(.end(end)))
    }

    private mutating func beginEnding(at now: Instant, into out: inout Output) {
        let interval: Double = if case .timed(let fps, _) = settings.pacing { 1 / fps } else { 1.0 / 30 }
        var unsent = unsent
        unsent.upcoming = nil
        phase = .ending(deadlineNs: now.monotonicNs.addingClamped(Self.nanoseconds(interval)), unsent)
        settleEnding(at: now, into: &out)
    }

    /// An ending stream with nothing left to send, and no send whose outcome is still to come, ends: `StreamEnd`,
    /// finished.
    private mutating func settleEnding(at now: Instant, into out: inout Output) {
        guard case .ending(_, let unsent) = phase, unsent.held == nil, unsent.waiting == nil, inFlight.isEmpty else { return }
        sendEnd(into: &out)
        phase = .finished
    }

    /// Whether an assigned thread would get a frame now or soon: a frame waits or is held, or an unpaced source is
    /// still being read.
    private var wantsThreads: Bool {
        switch phase {
        case .running(let unsent): unsent.waiting != nil || unsent.held != nil || settings.pacing == .unpaced
        case .ending(_, let unsent): unsent.waiting != nil || unsent.held != nil
        case .lost, .finished: false
        }
    }

    /// Threads the node wants beyond the assignments it holds: one for a waiting or held frame, the unpaced window
    /// (one per attached thread, at most `unpacedWindow`) while an unpaced source is read; none otherwise.
    private func wanted(at now: Instant) -> UInt32 {
        let desired: Int
        switch phase {
        case .running(let unsent) where settings.pacing == .unpaced:
            desired = unsent.waiting != nil || timeline.framesRead == 0
                ? max(1, min(settings.unpacedWindow, attachments.count)) : min(settings.unpacedWindow, attachments.count)
        case .running(let unsent), .ending(_, let unsent):
            desired = unsent.waiting != nil || unsent.held != nil ? 1 : 0
        case .lost, .finished:
            desired = 0
        }
        return UInt32(clamping: max(0, desired - credits.liveCount(at: now.monotonicNs)))
    }

    /// Hands an assignment back to the collector in the next request.
    private mutating func handBack(_ worker: String, unreachable: Bool) {
        if unreachable { demand.unreachable.append(worker) } else { demand.returned.append(worker) }
    }

    /// Tells the collector how many threads the node wants, with what it hands back, when that changed, and every
    /// request interval while it wants one (SPEC 3.2). An epoch that ended hands back every assignment it holds.
    private mutating func syncDemand(at now: Instant, into out: inout Output) {
        if !wantsThreads, credits.count > 0 {
            for worker in credits.removeAll() { handBack(worker, unreachable: false) }
        }
        let wanted = wanted(at: now)
        let due = wanted > 0 && now.monotonicNs.saturatingDistance(from: demand.lastRequestNs) >= settings.requestIntervalNs
        guard wanted != demand.lastWanted || !demand.returned.isEmpty || !demand.unreachable.isEmpty || due else { return }
        // At most 16 names of each list per request (the collector reads no more); the rest go in the next one.
        let limit = 16
        while true {
            var request = DispatchRequest()
            request.stream = settings.stream
            request.epoch = epoch
            request.wanted = wanted
            request.assignmentsSeen = demand.seen
            request.returned = Array(demand.returned.prefix(limit))
            request.unreachable = Array(demand.unreachable.prefix(limit))
            if settings.weight != 1 { request.weight = Float(settings.weight) }
            demand.returned.removeFirst(request.returned.count)
            demand.unreachable.removeFirst(request.unreachable.count)
            out.act(.control(.request(request)))
            if demand.returned.isEmpty && demand.unreachable.isEmpty { break }
        }
        out.count("dispatch_requests")
        demand.lastWanted = wanted
        demand.lastRequestNs = now.monotonicNs
    }

    /// Counts a refused Ready and logs it at most once per warning interval, with how many since the last line.
    private mutating func refuse(
        _ counter: String, _ message: String, at now: Instant, into out: inout Output, _ metadata: [String: String] = [:]
    ) {
        out.count(counter)
        housekeeping.refusedSinceWarning[counter, default: 0] += 1
        if let last = housekeeping.lastWarningNs[counter], now.monotonicNs.saturatingDistance(from: last) < settings.warningIntervalNs { return }
        out.log(.warning, message, metadata.merging(["refused": "\(housekeeping.refusedSinceWarning[counter] ?? 0)", "counter": "\(counter)"]) { $1 })
        housekeeping.lastWarningNs[counter] = now.monotonicNs
        housekeeping.refusedSinceWarning[counter] = 0
    }

    /// Seconds as nanoseconds, clamped to 0...2^62 (never traps on a huge or odd value).
    public static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return UInt64(min(seconds * 1e9, 4.6e18))
    }
}
