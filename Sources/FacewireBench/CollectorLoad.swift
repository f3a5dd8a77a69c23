import FacewireProtocol
import FacewireRuntime
import Foundation
import ZeroMQ

/// **A test tool**: plays a ``CollectorLoadPlan`` against a collector, as fast as it takes the results
/// (`facewire bench collector-load`).
///
/// One control DEALER plays every stream's capture node (a hello per stream every second, then each stream's
/// end); each fake worker thread has its own results DEALER, like a worker's detection thread. Every message is
/// encoded before the clock starts, so the sending threads only call `zmq_send`.
///
/// The load is closed-loop, as credits make a real cluster's: a SUB on the collector's results stream counts what
/// it published, and the threads together keep at most `maxInFlight` results sent but not yet published (without
/// it they would fill libzmq's queues, 100,000 messages per connection at the collector, and the collector's
/// `--max-delay` would drop what waits there). Threads also stay within `window` sequences of the slowest one, as
/// workers fed by one capture node do, so a reorder buffer holds at most that many results per stream (keep it
/// below the collector's `--max-pending`).
///
/// The report gives both rates: sent, and published as this subscriber saw it, and how often the threads had to
/// wait for the collector (`waited`: near 1 means the collector, not the generator, set the pace).
public final class CollectorLoad: @unchecked Sendable {
    public struct Report: Sendable, Encodable {
        public var results: UInt64
        public var seconds: Double
        /// Results sent per second.
        public var rate: Double
        /// Frames published per second, from the first to the last this subscriber received.
        public var publishedRate: Double
        /// Frames received on the results stream (a dropped run by its length).
        public var published: UInt64
        /// Batches of sends that had to wait for the collector to publish, as a fraction of all batches.
        public var waited: Double
        /// The mean size of an encoded result, in bytes.
        public var meanBytes: Double
        /// Seconds spent encoding before the clock started.
        public var prepareSeconds: Double
        /// CPU seconds (user + system) this process spent from the start of the clock to the report.
        public var cpuSeconds: Double
    }

    /// User + system CPU seconds of this process so far.
    public static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    public let plan: CollectorLoadPlan
    public let collector: String
    public let publish: String
    public let window: UInt64
    public let maxInFlight: UInt64
    /// How many sends a thread books at once.
    static let batch: UInt64 = 16
    private let context = ZMQContext()
    private let progress: ProgressBoard
    private let gate: FlowGate

    /// - Parameters:
    ///   - publish: the collector's results stream (PUB) endpoint.
    ///   - window: how many sequences the fastest thread may run ahead of the slowest (at least one per thread, at
    ///     most `maxInFlight / streams`).
    ///   - maxInFlight: results sent but not yet published, at most (raised to what the window can hold).
    public init(plan: CollectorLoadPlan, collector: String, publish: String, window: UInt64, maxInFlight: UInt64) {
        self.plan = plan
        self.collector = collector
        self.publish = publish
        // Fewer sequences apart with many streams, so that what waits in reorder buffers stays within `maxInFlight`;
        // and never less in flight than the window lets wait behind a missing head (else the slowest thread, whose
        // result is that head, could wait for the gate forever).
        // Clamped first, so that the sums below cannot overflow (streams ≤ 10,000, threads ≤ 64).
        let (window, maxInFlight) = (min(window, 1 << 32), min(maxInFlight, 1 << 40))
        let (threads, streams) = (UInt64(plan.threads), UInt64(plan.streams))
        self.window = max(threads, min(window, maxInFlight / streams))
        self.maxInFlight = max(maxInFlight, (self.window + threads) * streams + Self.batch * threads)
        progress = ProgressBoard(threads: plan.threads)
        gate = FlowGate()
    }

    /// Sends everything, then each stream's end, and waits (at most `timeoutSeconds` after the last send) for every
    /// stream's summary on the results stream; `started` is called when the clock starts (after encoding).
    public func run(timeoutSeconds: Double = 60, started: () -> Void = {}) throws -> Report {
        defer { context.shutdown() }
        let prepareStart = Clock.monotonicNanoseconds()
        let batches = try (0..<plan.threads).map { try plan.encodedResults(thread: $0) }
        let prepared = Clock.monotonicNanoseconds()
        let bytes = batches.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count } }

        let subscriber = try ZMQSocket(context: context, kind: .sub)
        defer { subscriber.close() }
        try subscriber.setHighWaterMarks(receive: 100_000)
        try subscriber.setMaxMessageSize(Wire.maxControlMessageBytes)
        // Heartbeats and this plan's streams only: other generators may load the same collector (bench-shards.py).
        try subscriber.subscribe([0])
        for index in 0..<plan.streams { try subscriber.subscribe(Wire.topic(forStream: plan.streamID(index))) }
        try subscriber.connect(publish)
        // The first heartbeat says the subscription has reached the publisher.
        guard try subscriber.waitForInput(timeoutMilliseconds: 10_000) else { throw NodeError("no heartbeat from \(publish)") }

        let control = try ZMQSocket(context: context, kind: .dealer)
        defer { control.close() }
        try control.setLinger(milliseconds: 5000)
        try control.setHighWaterMarks(send: 100_000)
        try control.connect(collector)
        let hellos: [[UInt8]] = try (0..<plan.streams).map { try plan.hello(stream: $0).serializedBytes() }
        for hello in hellos { try control.send([hello]) }
        // The hellos settle every stream's base at 0 before the first result: give them a head start.
        Thread.sleep(forTimeInterval: 0.2)

        started()
        let start = Clock.monotonicNanoseconds()
        let cpuStart = Self.processCPUSeconds()
        let threads = NodeThreads()
        for thread in 0..<plan.threads {
            let batch = batches[thread]
            threads.spawn("load-\(thread)") { [self] in try send(batch, thread: thread) }
        }
        var counter = PublishedCounter()
        var lastHello = start
        var sendingEnded: UInt64?
        var progressAt = (frames: UInt64(0), time: start)
        while counter.ends < plan.streams {
            let now = Clock.monotonicNanoseconds()
            if let ended = sendingEnded, now - ended > UInt64(timeoutSeconds * 1e9) { break }
            if counter.frames != progressAt.frames {
                progressAt = (counter.frames, now)
            } else if sendingEnded == nil, now - progressAt.time > UInt64(timeoutSeconds * 1e9) {
                throw NodeError("the collector published nothing for \(timeoutSeconds) s (\(counter.frames) frames so far)")
            }
            if sendingEnded == nil, threads.finished(within: 0) {
                if let failure = threads.join().first { throw NodeError(failure) }
                sendingEnded = Clock.monotonicNanoseconds()
                for index in 0..<plan.streams { try control.send([try plan.end(stream: index).serializedBytes()]) }
            }
            // A hello per stream every second, as live capture nodes do.
            if now - lastHello >= 1_000_000_000 {
                for hello in hellos { _ = try control.send([hello], dontWait: true) }
                lastHello = now
            }
            guard try subscriber.waitForInput(timeoutMilliseconds: 20) else { continue }
            var received: UInt64 = 0
            while received < 4096, let parts = try subscriber.receive(dontWait: true) {
                counter.take(parts, at: Clock.monotonicNanoseconds())
                received += 1
            }
            gate.published(counter.frames)
        }
        let sent = Double((sendingEnded ?? Clock.monotonicNanoseconds()) - start) / 1e9
        let total = plan.totalResults
        let publishing = Double(counter.lastFrame &- counter.firstFrame) / 1e9
        return Report(
            results: total, seconds: sent, rate: Double(total) / max(sent, 1e-9),
            publishedRate: counter.frames > 1 ? Double(counter.frames - 1) / max(publishing, 1e-9) : 0, published: counter.frames,
            waited: gate.waitedFraction, meanBytes: Double(bytes) / Double(max(total, 1)),
            prepareSeconds: Double(prepared - prepareStart) / 1e9, cpuSeconds: Self.processCPUSeconds() - cpuStart)
    }

    /// One fake worker thread: sends its results in order, never more than `window` sequences ahead of the slowest
    /// thread, and only while fewer than `maxInFlight` results wait to be published.
    private func send(_ batch: [[UInt8]], thread: Int) throws {
        let socket = try ZMQSocket(context: context, kind: .dealer)
        defer { socket.close() }
        try socket.setHighWaterMarks(send: 10_000)
        try socket.setLinger(milliseconds: 10_000)
        try socket.connect(collector)
        let streams = plan.streams
        var allowed: UInt64 = 0
        var booked: UInt64 = 0
        for (position, message) in batch.enumerated() {
            if position % streams == 0 {
                let seq = UInt64(thread) + UInt64(position / streams) * UInt64(plan.threads)
                progress.set(thread, seq)
                while seq >= allowed {
                    allowed = progress.slowest + window
                    if seq >= allowed { usleep(100) }
                }
            }
            if booked == 0 {
                booked = Self.batch
                if !gate.book(booked, limit: maxInFlight) {
                    gate.noteWait()
                    repeat { usleep(100) } while !gate.book(booked, limit: maxInFlight)
                }
            }
            booked -= 1
            try socket.send([message])
        }
        progress.set(thread, .max)
    }
}

/// What the subscriber has seen of the results stream: frames (a dropped run by its length) and stream summaries.
struct PublishedCounter {
    var frames: UInt64 = 0
    var ends = 0
    var firstFrame: UInt64 = 0
    var lastFrame: UInt64 = 0

    /// Counts one message of the results stream received at `now` (heartbeats and undecodable messages count
    /// nothing).
    mutating func take(_ parts: [[UInt8]], at now: UInt64) {
        guard parts.count == 2, parts[0].count > 1, let message = try? StreamMessage(parts: parts) else { return }
        switch message.body {
        case .frame(let frame):
            if frames == 0 { firstFrame = now }
            // The stream is a network value: a hostile run length saturates the count instead of trapping.
            let (sum, overflow) = frames.addingReportingOverflow(max(1, frame.runLength))
            frames = overflow ? .max : sum
            lastFrame = now
        case .end:
            ends += 1
        default:
            break
        }
    }
}

/// Results sent and published, shared by the sending threads and the subscriber.
final class FlowGate: @unchecked Sendable {
    private let lock = NSLock()
    private var sent: UInt64 = 0
    private var seen: UInt64 = 0
    private var bookings: UInt64 = 0
    private var waits: UInt64 = 0

    /// Books `count` sends if that keeps the results in flight within `limit`.
    func book(_ count: UInt64, limit: UInt64) -> Bool {
        lock.withLock {
            let (room, overflow) = seen.addingReportingOverflow(limit)
            guard overflow || sent + count <= room else { return false }
            sent += count
            bookings += 1
            return true
        }
    }

    /// A booking had to wait for the collector.
    func noteWait() {
        lock.withLock { waits += 1 }
    }

    /// The subscriber saw `frames` frames published so far.
    func published(_ frames: UInt64) {
        lock.withLock { seen = frames }
    }

    /// Bookings that had to wait, as a fraction of all.
    var waitedFraction: Double { lock.withLock { Double(waits) / Double(max(1, bookings)) } }
}

/// The next sequence of each sending thread, under a lock.
final class ProgressBoard: @unchecked Sendable {
    private let lock = NSLock()
    private var next: [UInt64]

    init(threads: Int) {
        next = Array(repeating: 0, count: threads)
    }

    func set(_ thread: Int, _ value: UInt64) {
        lock.withLock { next[thread] = value }
    }

    /// The sequence the slowest thread is at.
    var slowest: UInt64 { lock.withLock { next.min() ?? 0 } }
}
