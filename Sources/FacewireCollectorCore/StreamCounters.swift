/// Per-(stream, epoch) accounting of a ``ReorderBuffer``; maps onto `StreamSummary`.
public struct StreamCounters: Hashable, Sendable {
    /// Sequences emitted so far (`processed + dropped`); `StreamSummary.frames`.
    public var emitted: UInt64 = 0
    /// Sequences emitted with a result payload.
    public var processed: UInt64 = 0
    /// Sequences emitted as dropped (timeout, overflow, skipped at the source, flushed).
    public var dropped: UInt64 = 0
    /// Results discarded because their sequence had already been emitted as dropped,
    /// came before the collector joined the stream, or lie beyond the stream's end.
    public var late: UInt64 = 0
    /// Results discarded because a result (or skip) for the same sequence was already known.
    public var duplicates: UInt64 = 0

    /// All-zero counters.
    public init() {}

    /// Counters with the given values (mainly for tests).
    public init(emitted: UInt64, processed: UInt64, dropped: UInt64, late: UInt64, duplicates: UInt64) {
        self.emitted = emitted
        self.processed = processed
        self.dropped = dropped
        self.late = late
        self.duplicates = duplicates
    }
}
