/// Puts the results of ONE (stream, epoch) back in sequence order and decides, for every
/// sequence, exactly once, whether it is emitted as processed or as dropped.
///
/// This is a pure state machine: it never reads a clock. Every input carries the caller's
/// monotonic time in nanoseconds (`at:`), and the caller calls ``tick(at:)`` regularly
/// (or sleeps until ``nextDeadline``). Every mutating call returns the emissions it caused,
/// in order; the caller publishes them in that order.
///
/// ## Guarantees
/// - Emissions are in strictly increasing sequence order with no gap: every sequence from
///   ``base`` up to the highest known one appears exactly once, as `.frame` or `.dropped`.
/// - `.end` is emitted exactly once, last, when the stream's ``end(nextSeq:at:)`` is reached
///   or the buffer is ``flush(reason:)``ed. After that every input is discarded and counted.
/// - Every discarded input is counted in ``counters`` (`late` or `duplicates`).
///
/// ## Base (where emission starts)
/// Sequences start at 0 per epoch, but a collector may join mid-stream. Until the first
/// emission, the base is the lowest of the capture node's hello `nextSeq` (if one was noted)
/// and the lowest sequence received (result or skip). Emission starts once the base is
/// *settled*: a hello was noted, or `maxDelay` passed since the first input. It also settles
/// at once when the base is 0 (nothing can come before it), when an `end(nextSeq: 0)` was
/// received, or when more than `maxPending` results are buffered.
///
/// ## Giving up on a missing sequence
/// The next expected sequence (the *head*) is emitted as soon as it is present (a result or a
/// skip). A missing head is dropped with reason ``DropReason/timeout`` once `maxDelay` has
/// passed since the collector first learned of any later sequence (the earliest arrival time
/// among buffered results and skips, all of which lie beyond the head, or the arrival time of
/// `end`). It is dropped with ``DropReason/overflow`` at once when more than `maxPending`
/// results are buffered. Skip runs are stored compactly (a range each, so a run of 2^40 sequences
/// costs what a run of one does) and do not count against `maxPending` results; the number of
/// stored runs is bounded by `maxPending` separately: beyond it the missing head is given up as
/// ``DropReason/overflow`` in the same way.
///
/// A gap is emitted as ONE ``Emission/dropped(seqs:reason:)`` carrying its whole range: no work
/// or memory is ever proportional to the length of a run (a `StreamEnd` at 2^63 or a result
/// 2^40 ahead of the head costs one emission).
///
/// Sequence `UInt64.max` is never valid (it is counted as late).
public struct ReorderBuffer<Payload> {
    /// One step of the ordered output.
    public enum Emission {
        /// The result of sequence `seq`, in order.
        case frame(seq: UInt64, payload: Payload)
        /// The sequences `seqs` (a non-empty run, however long: one emission costs O(1)) will never have a
        /// result on the stream.
        case dropped(seqs: Range<UInt64>, reason: DropReason)
        /// The (stream, epoch) is complete; no more emissions follow. Carries the final counters and the sequence after
        /// the last one emitted (`StreamSummary.next_seq`).
        case end(StreamCounters, nextSeq: UInt64)
    }

    /// How long a missing head is waited for after a later sequence became known, in nanoseconds.
    public let maxDelay: UInt64
    /// The number of buffered results above which missing heads are dropped at once.
    public let maxPending: Int

    /// Accounting so far; `emitted == processed + dropped` at all times.
    public private(set) var counters = StreamCounters()
    /// The first sequence this buffer emits (or will emit); `nil` until anything is known.
    /// May still move down until the first emission.
    public private(set) var base: UInt64?
    /// The next sequence to emit (meaningful once ``base`` is known).
    public private(set) var head: UInt64 = 0
    /// Whether emission may start (see "Base" above).
    public private(set) var isSettled = false
    /// Whether `.end` was emitted; the buffer then ignores (and counts) everything.
    public private(set) var isFinished = false
    /// The `nextSeq` of the stream's end, once received.
    public private(set) var endSeq: UInt64?
    /// The highest sequence any accepted result or skip mentioned; `nil` if none.
    public private(set) var highestKnownSeq: UInt64?

    fileprivate struct Pending {
        var payload: Payload
        var at: UInt64
        var bytes: Int
    }

    fileprivate struct SkipRun {
        var range: Range<UInt64>
        var reason: DropReason
        var at: UInt64
    }

    private var helloSeen = false
    /// The highest `next_seq` a hello announced: frames below it were numbered, whatever came of them.
    public private(set) var announcedNextSeq: UInt64?
    /// A buffer restored after a failover (``init(restoring:maxDelayNanoseconds:maxPending:at:)``): gaps below this
    /// sequence drop as ``DropReason/failover`` instead of their usual reason. `.max` until the capture node's first
    /// hello after the takeover says where its frames sent to the new collector begin; `nil` in a buffer not restored.
    public private(set) var failoverBelow: UInt64?
    /// When a newer epoch superseded this one (SPEC 9.6): it then stays open only for what is still in flight.
    public private(set) var supersededAt: UInt64?
    /// The last input of any kind (a result, skip, hello or end), or the supersession.
    private var lastInputAt: UInt64?
    private var hasEmitted = false
    private var firstInputAt: UInt64?
    private var endAt: UInt64?
    /// Buffered results; all keys are `>= head`, disjoint from `skips`.
    private var results: [UInt64: Pending] = [:]
    /// Buffered skip runs: sorted, disjoint, all `>= head`.
    private var skips: [SkipRun] = []
    /// Sequences emitted as dropped, coalesced, sorted; pruned below `historyFloor`.
    private var droppedHistory: [Range<UInt64>] = []
    /// Below this sequence the processed/dropped history was forgotten: inputs count as late.
    private var historyFloor: UInt64 = 0
    /// Dropped ranges kept for telling late results from duplicates.
    private static var historyLimit: Int { 512 }

    /// Creates a buffer.
    /// - Parameters:
    ///   - maxDelayNanoseconds: `--max-delay`: the wait for a missing head after a later sequence is known.
    ///   - maxPending: `--max-pending`: the most results held while the head is missing (>= 0).
    public init(maxDelayNanoseconds: UInt64, maxPending: Int) {
        precondition(maxPending >= 0, "maxPending must not be negative")
        self.maxDelay = maxDelayNanoseconds
        self.maxPending = maxPending
    }

    /// Creates a buffer; a negative `maxDelay` counts as zero.
    public init(maxDelay: Duration, maxPending: Int) {
        let (seconds, attoseconds) = maxDelay.components
        let nanos: UInt64
        if seconds < 0 || (seconds == 0 && attoseconds < 0) {
            nanos = 0
        } else {
            let (s, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
            nanos = overflow ? .max : Self.add(s, UInt64(attoseconds / 1_000_000_000))
        }
        self.init(maxDelayNanoseconds: nanos, maxPending: maxPending)
    }

    /// What a buffer carries across a failover (``checkpoint``): where it is, and its accounting. Results and skips it
    /// holds are not carried; after the takeover their sequences drop as ``DropReason/failover``.
    public struct Checkpoint: Sendable, Equatable {
        /// Whether emission had started (the base settled); if not, the restored buffer starts as a new one.
        public var isSettled: Bool
        /// The next sequence to emit.
        public var head: UInt64
        public var announcedNextSeq: UInt64?
        public var endSeq: UInt64?
        public var isSuperseded: Bool
        public var counters: StreamCounters

        public init(
            isSettled: Bool, head: UInt64, announcedNextSeq: UInt64?, endSeq: UInt64?, isSuperseded: Bool, counters: StreamCounters
        ) {
            self.isSettled = isSettled
            self.head = head
            self.announcedNextSeq = announcedNextSeq
            self.endSeq = endSeq
            self.isSuperseded = isSuperseded
            self.counters = counters
        }
    }

    /// The buffer's checkpoint now.
    public var checkpoint: Checkpoint {
        Checkpoint(
            isSettled: isSettled, head: head, announcedNextSeq: announcedNextSeq, endSeq: endSeq, isSuperseded: supersededAt != nil,
            counters: counters)
    }

    /// A buffer continuing another collector's after a failover, at `now`. A settled checkpoint goes on at its head:
    /// sequences below it count as late, and every gap below the capture node's first hello from now on (or, until
    /// one comes, every gap) drops as ``DropReason/failover`` once `maxDelay` has passed. An unsettled one starts as a
    /// new buffer that has heard the checkpoint's hello. An end or supersession carries over, its wait starting `now`.
    public init(restoring checkpoint: Checkpoint, maxDelayNanoseconds: UInt64, maxPending: Int, at now: UInt64) {
        self.init(maxDelayNanoseconds: maxDelayNanoseconds, maxPending: maxPending)
        counters = checkpoint.counters
        announcedNextSeq = checkpoint.announcedNextSeq
        if checkpoint.isSettled {
            base = checkpoint.head
            head = checkpoint.head
            isSettled = true
            hasEmitted = true
            historyFloor = checkpoint.head
        } else if let announced = checkpoint.announcedNextSeq {
            helloSeen = true
            lowerBase(to: announced)
        }
        failoverBelow = .max
        if checkpoint.isSettled || checkpoint.announcedNextSeq != nil || checkpoint.endSeq != nil {
            firstInputAt = now
            lastInputAt = now
        }
        if let endSeq = checkpoint.endSeq {
            self.endSeq = endSeq
            endAt = now
        }
        if checkpoint.isSuperseded { supersededAt = now }
    }

    // MARK: - Inputs

    /// Notes the capture node's announcement: `nextSeq` is the next sequence it will assign.
    ///
    /// Before the first emission this settles the base (at `min(nextSeq, lowest received)`).
    /// After the first emission it changes nothing.
    public mutating func noteHello(nextSeq: UInt64, at now: UInt64) -> [Emission] {
        if !isFinished {
            announcedNextSeq = max(announcedNextSeq ?? nextSeq, nextSeq)
            lastInputAt = now
            // The first hello after a takeover: frames from `nextSeq` on were sent after it, and are not the handover's.
            if failoverBelow == .max { failoverBelow = max(nextSeq, head) }
        }
        if !isFinished && !hasEmitted {
            helloSeen = true
            lowerBase(to: nextSeq)
        }
        return advanced(now)
    }

    /// A newer epoch of the stream began (SPEC 9.6): this one will get no more frames, but frames it already numbered
    /// may still be at workers. It stays open for them: results and skips are still accepted at any sequence; a
    /// missing head drops as ``DropReason/superseded`` `maxDelay` after something beyond it was known; and once
    /// nothing is missing and nothing came for `maxDelay`, the sequences up to the highest `next_seq` a hello announced
    /// drop as `superseded` and the epoch ends at its head. This holds too for an epoch known only by its hello: the
    /// node may have died with frames at workers whose results are still to come. Only the first call counts.
    public mutating func supersede(at now: UInt64) -> [Emission] {
        guard !isFinished, supersededAt == nil else { return [] }
        supersededAt = now
        lastInputAt = max(lastInputAt ?? now, now)
        return advanced(now)
    }

    /// Stores the result of `seq` and returns whatever can now be emitted.
    ///
    /// Discarded and counted instead: a sequence already buffered or emitted as processed
    /// (`duplicates`), a sequence emitted as dropped, below the base, at or beyond the end, or
    /// arriving after the buffer finished (`late`).
    /// `bytes` is the caller's estimate of the payload's size, summed in ``pendingBytes``.
    public mutating func receive(seq: UInt64, payload: Payload, bytes: Int = 0, at now: UInt64) -> [Emission] {
        if accept(seq: seq, at: now) {
            results[seq] = Pending(payload: payload, at: now, bytes: bytes)
            pendingBytes &+= bytes
            noteKnown(seq)
        }
        return advanced(now)
    }

    /// Notes that the capture node numbered `count` frames from `firstSeq` but never sent them:
    /// they are emitted in order as dropped with `reason`, exactly like results.
    ///
    /// Parts of the run already emitted, already buffered (a result wins) or at or beyond the
    /// end are ignored; skips never change the counters other than through emission.
    public mutating func skip(firstSeq: UInt64, count: UInt64, reason: DropReason, at now: UInt64) -> [Emission] {
        if !isFinished && count > 0 && firstSeq < .max {
            var upper = Self.add(firstSeq, count)
            if let endSeq { upper = min(upper, endSeq) }
            if firstSeq < upper {
                noteInput(lowest: firstSeq, at: now)
                let lower = max(firstSeq, head)
                if lower < upper {
                    insertSkip(lower..<upper, reason: reason, at: now)
                    noteKnown(upper - 1)
                }
            }
        }
        return advanced(now)
    }

    /// Notes that the source ended: sequences below `nextSeq` are all there will be.
    ///
    /// Missing sequences below `nextSeq` are dropped (timeout) `maxDelay` after this call at
    /// the latest; then `.end` is emitted. Buffered results at or beyond `nextSeq` are
    /// discarded as late. Only the first end counts; later ones are ignored.
    public mutating func end(nextSeq: UInt64, at now: UInt64) -> [Emission] {
        if !isFinished { lastInputAt = now }
        if !isFinished && endSeq == nil {
            endSeq = nextSeq
            endAt = now
            if firstInputAt == nil { firstInputAt = now }
            for key in results.keys where key >= nextSeq {
                pendingBytes &-= results[key]?.bytes ?? 0
                results[key] = nil
                counters.late = Self.add(counters.late, 1)
            }
            skips = skips.compactMap { run in
                guard run.range.lowerBound < nextSeq else { return nil }
                var run = run
                run.range = run.range.lowerBound..<min(run.range.upperBound, nextSeq)
                return run
            }
        }
        return advanced(now)
    }

    /// Lets time pass: settles the base or gives up missing heads whose deadline is reached.
    public mutating func tick(at now: UInt64) -> [Emission] {
        advanced(now)
    }

    /// Closes the buffer at once (for example when a new epoch replaces this one): emits every
    /// buffered entry in order, every missing sequence up to the highest known one as dropped
    /// with `reason`, then `.end`. Returns `[]` if the buffer had already finished.
    public mutating func flush(reason: DropReason) -> [Emission] {
        guard !isFinished else { return [] }
        var out: [Emission] = []
        if base == nil {
            // Nothing but possibly an end was heard: nothing to emit.
            base = endSeq ?? 0
            head = base!
        }
        isSettled = true
        while true {
            if let endSeq, head >= endSeq { break }
            if emitPresentHead(into: &out) { continue }
            guard let gapEnd = nextKnownSeq() else { break }
            emitGap(head..<gapEnd, reason: reason, into: &out)
        }
        finish(into: &out)
        return out
    }

    // MARK: - Observing

    /// The monotonic time (ns) at which ``tick(at:)`` would next emit something without new
    /// input (settling the base, or giving up the head); `nil` if only new input can.
    public var nextDeadline: UInt64? {
        if isFinished { return nil }
        if !isSettled {
            return firstInputAt.map { Self.add($0, maxDelay) }
        }
        let gaveUp = laterKnownAt.map { Self.add($0, maxDelay) }
        guard supersededAt != nil, let quiet = lastInputAt.map({ Self.add($0, maxDelay) }) else { return gaveUp }
        return min(gaveUp ?? quiet, quiet)
    }

    /// The number of buffered results (what `maxPending` bounds).
    public var pendingCount: Int { results.count }

    /// The number of stored skip runs (bounded by `maxPending`).
    public var storedSkipRunCount: Int { skips.count }

    /// The sum of the `bytes` given with the buffered results.
    public private(set) var pendingBytes = 0

    // MARK: - Private

    private static func add(_ a: UInt64, _ b: UInt64) -> UInt64 { a.addingClamped(b) }

    private mutating func noteKnown(_ seq: UInt64) {
        highestKnownSeq = max(highestKnownSeq ?? seq, seq)
    }

    private mutating func lowerBase(to seq: UInt64) {
        if base == nil || seq < base! {
            base = seq
            head = seq
        }
    }

    /// Records that an input mentioning `lowest` (and above) arrived.
    private mutating func noteInput(lowest: UInt64, at now: UInt64) {
        if firstInputAt == nil { firstInputAt = now }
        lastInputAt = now
        if !hasEmitted { lowerBase(to: lowest) }
    }

    /// Whether a result for `seq` should be buffered; counts it otherwise.
    private mutating func accept(seq: UInt64, at now: UInt64) -> Bool {
        if isFinished || seq == .max {
            countOld(seq)
            return false
        }
        if let endSeq, seq >= endSeq {
            counters.late = Self.add(counters.late, 1)
            return false
        }
        noteInput(lowest: seq, at: now)
        if seq < head {
            countOld(seq)
            return false
        }
        if results[seq] != nil || skipRunIndex(containing: seq) != nil {
            counters.duplicates = Self.add(counters.duplicates, 1)
            return false
        }
        return true
    }

    /// Counts a result that cannot be used because its sequence is behind the head
    /// (or the buffer finished): late if it was dropped or never ours, duplicate if processed.
    private mutating func countOld(_ seq: UInt64) {
        guard let base, seq >= base, seq < head, seq >= historyFloor, !droppedHistoryContains(seq) else {
            counters.late = Self.add(counters.late, 1)
            return
        }
        counters.duplicates = Self.add(counters.duplicates, 1)
    }

    private func droppedHistoryContains(_ seq: UInt64) -> Bool {
        // Binary search for the last range whose lowerBound <= seq.
        var low = 0
        var high = droppedHistory.count
        while low < high {
            let mid = (low + high) / 2
            if droppedHistory[mid].lowerBound <= seq { low = mid + 1 } else { high = mid }
        }
        return low > 0 && droppedHistory[low - 1].contains(seq)
    }

    private func skipRunIndex(containing seq: UInt64) -> Int? {
        skips.firstIndex { $0.range.contains(seq) }
    }

    /// Inserts the parts of `range` not already covered by buffered results or skips.
    private mutating func insertSkip(_ range: Range<UInt64>, reason: DropReason, at now: UInt64) {
        var occupied: [Range<UInt64>] = results.keys
            .filter { range.contains($0) }
            .map { $0..<($0 + 1) }  // keys are < UInt64.max
        occupied += skips.lazy.filter { $0.range.overlaps(range) }.map(\.range)
        occupied.sort { $0.lowerBound < $1.lowerBound }
        var cursor = range.lowerBound
        for taken in occupied where cursor < range.upperBound {
            if taken.lowerBound > cursor {
                skips.append(SkipRun(range: cursor..<min(taken.lowerBound, range.upperBound), reason: reason, at: now))
            }
            cursor = max(cursor, taken.upperBound)
        }
        if cursor < range.upperBound {
            skips.append(SkipRun(range: cursor..<range.upperBound, reason: reason, at: now))
        }
        skips.sort { $0.range.lowerBound < $1.range.lowerBound }
        // Coalesce adjacent runs with the same reason (keeping the earliest arrival: runs lie
        // wholly beyond a missing head, so only the minimum arrival time ever matters).
        var merged: [SkipRun] = []
        merged.reserveCapacity(skips.count)
        for run in skips {
            if var last = merged.last, last.range.upperBound == run.range.lowerBound, last.reason == run.reason {
                last.range = last.range.lowerBound..<run.range.upperBound
                last.at = min(last.at, run.at)
                merged[merged.count - 1] = last
            } else {
                merged.append(run)
            }
        }
        skips = merged
    }

    /// The earliest time the collector learned of a sequence beyond the (missing) head.
    /// Every buffered entry lies beyond a missing head, and an end covers it.
    private var laterKnownAt: UInt64? {
        var earliest = endAt
        for pending in results.values { earliest = min(earliest ?? pending.at, pending.at) }
        for run in skips { earliest = min(earliest ?? run.at, run.at) }
        return earliest
    }

    /// The lowest sequence above a missing head that is present or is the end.
    private func nextKnownSeq() -> UInt64? {
        var next = endSeq
        if let key = results.keys.min() { next = min(next ?? key, key) }
        if let run = skips.first { next = min(next ?? run.range.lowerBound, run.range.lowerBound) }
        return next
    }

    private mutating func trySettle(at now: UInt64) {
        guard !isSettled else { return }
        var settle = helloSeen || base == 0 || endSeq == 0 || results.count > maxPending || skips.count > maxPending
            || supersededAt != nil
        if let firstInputAt, now >= Self.add(firstInputAt, maxDelay) { settle = true }
        guard settle, firstInputAt != nil || helloSeen else { return }
        if base == nil {
            // Only an end was received: nothing of this epoch reached us.
            base = endSeq ?? 0
            head = base!
        }
        isSettled = true
    }

    /// Emits the head if it is buffered (a result or a skip run starting at it).
    private mutating func emitPresentHead(into out: inout [Emission]) -> Bool {
        if let pending = results.removeValue(forKey: head) {
            pendingBytes &-= pending.bytes
            out.append(.frame(seq: head, payload: pending.payload))
            counters.processed = Self.add(counters.processed, 1)
            counters.emitted = Self.add(counters.emitted, 1)
            hasEmitted = true
            head += 1
            return true
        }
        if let run = skips.first, run.range.lowerBound == head {
            skips.removeFirst()
            emitDropped(run.range, reason: run.reason, into: &out)
            return true
        }
        return false
    }

    /// Emits the gap `range` (starting at the head) as dropped with `reason`, except its part below ``failoverBelow``,
    /// which the handover lost (``DropReason/failover``). Skips the capture node reported keep their reason.
    private mutating func emitGap(_ range: Range<UInt64>, reason: DropReason, into out: inout [Emission]) {
        if let floor = failoverBelow, range.lowerBound < floor {
            let split = min(floor, range.upperBound)
            emitDropped(range.lowerBound..<split, reason: .failover, into: &out)
            emitDropped(split..<range.upperBound, reason: reason, into: &out)
        } else {
            emitDropped(range, reason: reason, into: &out)
        }
    }

    private mutating func emitDropped(_ range: Range<UInt64>, reason: DropReason, into out: inout [Emission]) {
        assert(range.lowerBound == head)
        guard !range.isEmpty else { return }
        out.append(.dropped(seqs: range, reason: reason))
        // Never `range.count`: it is an Int and traps for runs longer than Int.max.
        let count = range.upperBound - range.lowerBound
        counters.dropped = Self.add(counters.dropped, count)
        counters.emitted = Self.add(counters.emitted, count)
        hasEmitted = true
        head = range.upperBound
        recordDropped(range)
    }

    private mutating func recordDropped(_ range: Range<UInt64>) {
        if let last = droppedHistory.last, last.upperBound == range.lowerBound {
            droppedHistory[droppedHistory.count - 1] = last.lowerBound..<range.upperBound
        } else {
            droppedHistory.append(range)
        }
        if droppedHistory.count > 2 * Self.historyLimit {
            let forget = droppedHistory.count - Self.historyLimit
            historyFloor = droppedHistory[forget - 1].upperBound
            droppedHistory.removeFirst(forget)
        }
    }

    private mutating func finish(into out: inout [Emission]) {
        isFinished = true
        results.removeAll()
        pendingBytes = 0
        skips.removeAll()
        out.append(.end(counters, nextSeq: head))
    }

    private mutating func advanced(_ now: UInt64) -> [Emission] {
        var out: [Emission] = []
        advance(now, into: &out)
        return out
    }

    /// The emission rule: emit present heads; give up missing ones on timeout or overflow.
    private mutating func advance(_ now: UInt64, into out: inout [Emission]) {
        guard !isFinished else { return }
        trySettle(at: now)
        guard isSettled else { return }
        while true {
            if let endSeq, head >= endSeq {
                finish(into: &out)
                return
            }
            if emitPresentHead(into: &out) { continue }
            // The head is missing. Every sequence up to the next known one shares its deadline
            // and the overflow condition, so the whole gap is given up at once.
            guard let gapEnd = nextKnownSeq() else {
                // Nothing known beyond the head: a superseded epoch that stayed quiet for maxDelay is over (its
                // announced frames that never came drop as superseded).
                guard supersededAt != nil, let quiet = lastInputAt, now >= Self.add(quiet, maxDelay) else { return }
                if let announced = announcedNextSeq, announced > head {
                    emitGap(head..<announced, reason: .superseded, into: &out)
                }
                finish(into: &out)
                return
            }
            if let known = laterKnownAt, now >= Self.add(known, maxDelay) {
                emitGap(head..<gapEnd, reason: supersededAt == nil ? .timeout : .superseded, into: &out)
            } else if results.count > maxPending || skips.count > maxPending {
                emitGap(head..<gapEnd, reason: .overflow, into: &out)
            } else {
                return
            }
        }
    }
}

extension ReorderBuffer: Sendable where Payload: Sendable {}
extension ReorderBuffer.Pending: Sendable where Payload: Sendable {}
extension ReorderBuffer.Emission: Sendable where Payload: Sendable {}
extension ReorderBuffer.Emission: Equatable where Payload: Equatable {}
extension ReorderBuffer.Emission: Hashable where Payload: Hashable {}

extension ReorderBuffer.Emission {
    /// The (first) sequence of a `.frame` or `.dropped` emission; `nil` for `.end`.
    public var seq: UInt64? {
        switch self {
        case .frame(let seq, _): seq
        case .dropped(let seqs, _): seqs.lowerBound
        case .end: nil
        }
    }

    /// How many sequences the emission stands for: 1 for a frame, the run's length for a drop, 0 for `.end`.
    public var sequenceCount: UInt64 {
        switch self {
        case .frame: 1
        case .dropped(let seqs, _): seqs.upperBound - seqs.lowerBound
        case .end: 0
        }
    }
}
