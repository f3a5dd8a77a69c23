/// Notices frames a subscriber never received. The collector publishes every sequence of a (stream, epoch) exactly
/// once and in order, so a jump in `seq` on a subscriber means ZeroMQ's PUB socket dropped messages for it (it does
/// so silently when a subscriber falls more than its high-water mark behind); the subscriber is the one place where
/// this can be counted.
public struct GapDetector: Sendable {
    private struct Key: Hashable {
        var stream: String
        var epoch: UInt64
    }

    private var next: [Key: UInt64] = [:]
    /// Frames missed so far, over all streams.
    public private(set) var missed: UInt64 = 0

    public init() {}

    /// Notes a frame; returns how many frames of its (stream, epoch) were missed just before it (0 normally).
    /// The first frame seen of a (stream, epoch) starts it, wherever it is (a subscriber may join mid-stream).
    /// A dropped run (`runLength` > 1, SPEC.md 9.1) stands for `seq ... seq + runLength - 1`: the next frame expected
    /// is the one after the run (saturating: a run reaching the last sequence leaves nothing to expect).
    public mutating func observe(stream: String, epoch: UInt64, seq: UInt64, runLength: UInt64 = 1) -> UInt64 {
        let key = Key(stream: stream, epoch: epoch)
        let (after, overflow) = seq.addingReportingOverflow(max(runLength, 1))
        defer { next[key] = max(next[key] ?? 0, overflow ? .max : after) }
        guard let expected = next[key], seq > expected else { return 0 }
        let (total, full) = missed.addingReportingOverflow(seq - expected)
        missed = full ? .max : total
        return seq - expected
    }

    /// Forgets a (stream, epoch) whose end was received.
    public mutating func finish(stream: String, epoch: UInt64) {
        next[Key(stream: stream, epoch: epoch)] = nil
    }
}
