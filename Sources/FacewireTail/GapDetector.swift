/// Notices frames a subscriber never received, so that each one still gets a line. The collector publishes every
/// sequence of a (stream, epoch) exactly once and in order, so a jump in `seq` on a subscriber means the frames between
/// never reached it: ZeroMQ's PUB socket dropped them (it does so silently when a subscriber falls more than its
/// high-water mark behind), or they were lost with a collector that restarted, or that took over a failover group
/// without a current copy of the state (SPEC.md 18.5). The subscriber is the one place where this can be seen.
///
/// Per (stream, epoch) it remembers the next sequence expected; at most ``maxStreams`` pairs, beyond which the least
/// recently seen half is forgotten (a forgotten pair starts afresh, as one joined mid-stream does).
public struct GapDetector: Sendable {
    /// Why sequences are missing.
    public enum Cause: Sendable, Equatable {
        /// They never reached this subscriber (SPEC.md 10: `missed`).
        case missed
        /// A collector that took over the group without the state numbered the stream afresh
        /// (``noteTakeover(stream:epoch:)``) and the jump came right after it (SPEC.md 10: `failover`).
        case failover

        /// The `FrameResult.reason` of the line that stands for them.
        public var reason: String {
            switch self {
            case .missed: "missed"
            case .failover: "failover"
            }
        }
    }

    /// What became of one frame line (a result, or a dropped run of `runLength`).
    public struct Observation: Sendable, Equatable {
        /// The sequences just before it that never arrived (empty normally).
        public var missing: Range<UInt64>
        /// Why they are missing (meaningful when `missing` is not empty).
        public var cause: Cause
        /// The part of the frame's own sequences that had no line yet: all of them normally; empty when each already
        /// had one (or was counted missing), as after a takeover that published again what its predecessor had.
        public var fresh: Range<UInt64>

        public init(missing: Range<UInt64>, cause: Cause, fresh: Range<UInt64>) {
            self.missing = missing
            self.cause = cause
            self.fresh = fresh
        }
    }

    private struct Key: Hashable {
        var stream: String
        var epoch: UInt64
    }

    private struct Mark {
        /// The next sequence expected.
        var next: UInt64
        /// A takeover without the state renumbered the pair and no frame came since.
        var takeover: Bool
        var order: UInt64
    }

    private var marks: [Key: Mark] = [:]
    private var order: UInt64 = 0
    /// The most (stream, epoch) pairs remembered.
    public let maxStreams: Int
    /// Frames missed so far, over all streams and causes.
    public private(set) var missed: UInt64 = 0

    public init(maxStreams: Int = 65_536) { self.maxStreams = max(2, maxStreams) }

    /// Notes a frame line standing for `seq ..< seq + runLength` (a `runLength` of 0 is 1; SPEC.md 9.1), saturating
    /// at the last sequence. The first frame seen of a (stream, epoch) starts it, wherever it is (a subscriber may
    /// join mid-stream).
    public mutating func observe(stream: String, epoch: UInt64, seq: UInt64, runLength: UInt64 = 1) -> Observation {
        let key = Key(stream: stream, epoch: epoch)
        let (sum, overflow) = seq.addingReportingOverflow(max(runLength, 1))
        let after = overflow ? UInt64.max : sum
        order &+= 1
        guard let mark = marks[key] else {
            if marks.count >= maxStreams {
                let kept = marks.sorted { $0.value.order > $1.value.order }.prefix(maxStreams / 2)
                marks = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
            }
            marks[key] = Mark(next: after, takeover: false, order: order)
            return Observation(missing: seq..<seq, cause: .missed, fresh: seq..<after)
        }
        let missing = seq > mark.next ? mark.next..<seq : seq..<seq
        let (total, full) = missed.addingReportingOverflow(missing.upperBound - missing.lowerBound)
        missed = full ? .max : total
        let fresh = max(seq, mark.next)..<max(after, mark.next)
        marks[key] = Mark(next: max(after, mark.next), takeover: false, order: order)
        return Observation(missing: missing, cause: mark.takeover ? .failover : .missed, fresh: fresh)
    }

    /// Notes that a collector took over the group without a current copy of the (stream, epoch)'s state and numbered
    /// its messages afresh: the jump to its first frame is the frames lost with its predecessor.
    public mutating func noteTakeover(stream: String, epoch: UInt64) {
        marks[Key(stream: stream, epoch: epoch)]?.takeover = true
    }

    /// Forgets a (stream, epoch) whose end was received; returns the sequences before `nextSeq` (the summary's
    /// `next_seq`: 0 when the collector did not say) that never arrived, if the pair was followed.
    public mutating func finish(stream: String, epoch: UInt64, nextSeq: UInt64 = 0) -> (missing: Range<UInt64>, cause: Cause) {
        guard let mark = marks.removeValue(forKey: Key(stream: stream, epoch: epoch)), nextSeq > mark.next else {
            return (nextSeq..<nextSeq, .missed)
        }
        let (total, full) = missed.addingReportingOverflow(nextSeq - mark.next)
        missed = full ? .max : total
        return (mark.next..<nextSeq, mark.takeover ? .failover : .missed)
    }
}
