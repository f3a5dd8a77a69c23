import FacewireProtocol
import FacewireVocabulary
@testable import FacewireCollectorCore

/// A core driven by hand: a fake clock, peers as ROUTER identities, and helpers that build the protocol's own
/// messages with any field values.
struct CoreHarness {
    var core: CollectorCore
    /// Monotonic nanoseconds.
    var now: UInt64 = 1_000_000_000
    /// Wall-clock microseconds (2024-11-22).
    var wall: Int64 = 1_732_240_000_000_000
    /// Everything published so far, in order.
    var published: [StreamMessage] = []
    var outputs: [CollectorOutput] = []

    static let capture: [UInt8] = [1]
    static let worker: [UInt8] = [2]

    init(_ limits: CollectorLimits = CollectorLimits(maxDelay: 100_000_000, statisticsInterval: 0)) {
        core = CollectorCore(limits: limits)
    }

    var instant: CollectorCore.Instant { .init(monotonicNs: now, wallUs: wall) }

    mutating func advance(ms: UInt64) { now += ms * 1_000_000; wall += Int64(ms) * 1000 }

    @discardableResult
    mutating func send(_ body: Envelope.OneOf_Body, from identity: [UInt8] = CoreHarness.capture) -> CollectorOutput {
        record(core.handle(Envelope(body), from: identity, peerAddress: "10.0.0.9", at: instant))
    }

    @discardableResult
    mutating func tick() -> CollectorOutput { record(core.tick(at: instant)) }

    private mutating func record(_ output: CollectorOutput) -> CollectorOutput {
        published += output.publish
        outputs.append(output)
        return output
    }

    /// The total of counter `name` over every output so far.
    func total(_ name: String) -> UInt64 { outputs.reduce(0) { $0.addingClamped($1.total(name)) } }
    /// Log lines so far whose metadata `kind` is `kind`.
    func notices(_ kind: String) -> Int { outputs.flatMap(\.logs).filter { $0.metadata["kind"] == kind }.count }

    /// The frames published for a stream, in order.
    func frames(_ stream: String) -> [FrameResult] {
        published.compactMap { message in
            guard message.stream == stream, case .frame(let frame)? = message.body else { return nil }
            return frame
        }
    }

    func summary(_ stream: String) -> StreamSummary? {
        for message in published where message.stream == stream {
            if case .end(let summary)? = message.body { return summary }
        }
        return nil
    }

    static func hello(_ stream: String, epoch: UInt64 = 1, nextSeq: UInt64 = 0, role: NodeRole = .capture) -> Envelope.OneOf_Body {
        var hello = Hello()
        hello.dispatch = Wire.dispatchVersion
        hello.role = role
        hello.stream = stream
        hello.epoch = epoch
        hello.nextSeq = nextSeq
        hello.frameEndpoint = "tcp://*:5556"
        hello.nodeID = "node-\(stream)"
        return .hello(hello)
    }

    static func result(_ stream: String, seq: UInt64, epoch: UInt64 = 1, captureTime: Int64 = 0) -> Envelope.OneOf_Body {
        var result = FrameResult()
        result.stream = stream
        result.epoch = epoch
        result.seq = seq
        result.captureTimeUs = captureTime
        result.status = .processed
        result.worker = "w-1"
        return .result(result)
    }

    static func skip(_ stream: String, first: UInt64, count: UInt64, epoch: UInt64 = 1, captureTime: Int64 = 0) -> Envelope.OneOf_Body {
        var skipped = Skipped()
        skipped.stream = stream
        skipped.epoch = epoch
        skipped.firstSeq = first
        skipped.count = count
        skipped.reason = "no-worker"
        skipped.captureTimeUs = captureTime
        return .skipped(skipped)
    }

    static func end(_ stream: String, nextSeq: UInt64, epoch: UInt64 = 1) -> Envelope.OneOf_Body {
        var end = StreamEnd()
        end.stream = stream
        end.epoch = epoch
        end.nextSeq = nextSeq
        return .end(end)
    }
}

extension FrameResult {
    /// The sequences this frame line stands for.
    var seqCount: UInt64 { runLength > 1 ? runLength : 1 }
}

/// Checks a stream's published frames: in order, each sequence once, no gap, starting at `first`; returns the
/// number of sequences covered (runs counted by their length).
func checkOrdered(_ frames: [FrameResult], from first: UInt64 = 0) -> (ok: Bool, covered: UInt64) {
    var next = first
    for frame in frames {
        guard frame.seq == next else { return (false, next &- first) }
        let (after, overflow) = frame.seq.addingReportingOverflow(frame.seqCount)
        next = overflow ? .max : after
    }
    return (true, next &- first)
}
