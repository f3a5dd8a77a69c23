/// Every open (stream, epoch) of a collector, each with its ``ReorderBuffer``, and the rules that tie epochs of one
/// stream together (SPEC.md 9.6): a newer epoch ends the older ones, messages of an epoch older than the newest are
/// refused, and an epoch whose end was published stays closed (its stragglers are refused, not reopened).
///
/// Pure: no sockets and no clock; the caller passes monotonic nanoseconds. ``CollectorNode`` keeps its per-stream
/// tracking and statistics beside it, keyed by ``Key``.
public struct StreamTable<Payload> {
    public typealias Emission = ReorderBuffer<Payload>.Emission

    /// One (stream, epoch).
    public struct Key: Hashable, Comparable, Sendable, CustomStringConvertible {
        public var stream: String
        public var epoch: UInt64

        public init(stream: String, epoch: UInt64) {
            self.stream = stream
            self.epoch = epoch
        }

        public static func < (a: Key, b: Key) -> Bool { (a.stream, a.epoch) < (b.stream, b.epoch) }
        public var description: String { "\(stream)/\(epoch)" }
    }

    /// What a capture node or a worker can say about a (stream, epoch).
    public enum Input {
        case hello(nextSeq: UInt64)
        case result(seq: UInt64, payload: Payload, bytes: Int = 0)
        case skip(firstSeq: UInt64, count: UInt64, reason: DropReason)
        case end(nextSeq: UInt64)
    }

    /// Why an input was refused without reaching any buffer.
    public enum Rejection: Equatable, Sendable {
        /// A newer epoch of the stream is already open or was seen (a straggler of a replaced capture node).
        case staleEpoch
        /// The epoch already published its end.
        case afterEnd
        /// It would open a new stream while ``maxOpen`` (stream, epoch) pairs are open (`--max-streams`).
        case full
    }

    /// What one input did.
    public struct Outcome {
        /// Set when the input was refused; nothing was emitted then.
        public var rejected: Rejection?
        /// The key the input opened, if it was the first of its (stream, epoch).
        public var opened: Key?
        /// Older epochs of the stream that this input's (newer) epoch ended.
        public var replaced: [Key] = []
        /// What became ready, per key, in the order to publish it (replaced epochs first).
        public var emissions: [(key: Key, emissions: [Emission])] = []
    }

    public let maxDelay: UInt64
    public let maxPending: Int
    /// How long an ended (stream, epoch) is remembered, refusing its stragglers, in nanoseconds.
    public let endedMemory: UInt64

    private var buffers: [Key: ReorderBuffer<Payload>] = [:]
    /// The keys of `buffers`, sorted: kept as keys open and close, not sorted again on every tick (a collector ticks
    /// after every batch of messages, hundreds of times a second, over every open stream).
    private var sortedKeys: [Key] = []
    /// The newest epoch seen per stream.
    private var newestEpoch: [String: UInt64] = [:]
    /// Epochs whose end was emitted, with when.
    private var ended: [Key: UInt64] = [:]

    /// The most open (stream, epoch) pairs: a new stream beyond it is refused (``Rejection/full``). A new epoch of
    /// an open stream is still accepted (it replaces the old one, which then ends), so at most twice this many
    /// are open for a moment.
    public let maxOpen: Int

    public init(
        maxDelayNanoseconds: UInt64, maxPending: Int, endedMemoryNanoseconds: UInt64 = 3_600_000_000_000, maxOpen: Int = .max
    ) {
        maxDelay = maxDelayNanoseconds
        self.maxPending = maxPending
        endedMemory = endedMemoryNanoseconds
        self.maxOpen = maxOpen
    }

    /// The sum of every open buffer's ``ReorderBuffer/pendingBytes``.
    public private(set) var pendingBytes = 0

    /// How many (stream, epoch) pairs are open.
    public var openCount: Int { buffers.count }

    /// The open keys, sorted.
    public var openKeys: [Key] { sortedKeys }

    /// The buffer of an open key (for its head and counters).
    public func buffer(_ key: Key) -> ReorderBuffer<Payload>? { buffers[key] }

    /// The earliest time a ``tick(at:)`` would emit something.
    public var nextDeadline: UInt64? { buffers.values.compactMap(\.nextDeadline).min() }

    /// How many ended keys are remembered (bounded by ``endedMemory`` and by 8 × ``maxOpen``).
    public var rememberedEndCount: Int { ended.count }

    /// The most ended (stream, epoch) pairs remembered: 8 × ``maxOpen`` (the oldest are forgotten first, down to half).
    public var maxEndedRemembered: Int { Self.maxEndedRemembered(maxOpen: maxOpen) }

    /// The most ended pairs a table with `maxOpen` remembers.
    public static func maxEndedRemembered(maxOpen: Int) -> Int { min(maxOpen, Int.max / 16) * 8 }

    /// Applies one input for (stream, epoch) at `now`.
    public mutating func apply(_ input: Input, stream: String, epoch: UInt64, at now: UInt64) -> Outcome {
        var outcome = Outcome()
        let key = Key(stream: stream, epoch: epoch)
        if buffers[key] == nil {
            if ended[key] != nil {
                outcome.rejected = .afterEnd
                return outcome
            }
            if let newest = newestEpoch[stream], epoch < newest {
                outcome.rejected = .staleEpoch
                return outcome
            }
            // A newer epoch may replace an open one beyond the cap (the old one still waits for its gaps), but never
            // past twice the cap: a peer chaining epochs faster than --max-delay must not open buffers without bound.
            let replacesOpenEpoch = newestEpoch[stream].map { buffers[Key(stream: stream, epoch: $0)] != nil } ?? false
            let cap = min(maxOpen, Int.max / 2)
            if buffers.count >= 2 * cap || (buffers.count >= cap && !replacesOpenEpoch) {
                outcome.rejected = .full
                return outcome
            }
            // A newer epoch: the capture node restarted. Each older epoch stays open for its frames still in flight,
            // even one known only by its hello, and ends once quiet for --max-delay (ReorderBuffer.supersede).
            for oldKey in buffers.keys.filter({ $0.stream == stream }).sorted() {
                outcome.replaced.append(oldKey)
                let emissions = update(oldKey, now: now) { buffer in buffer.supersede(at: now) }
                if !emissions.isEmpty { outcome.emissions.append((oldKey, emissions)) }
            }
            newestEpoch[stream] = epoch
            buffers[key] = ReorderBuffer(maxDelayNanoseconds: maxDelay, maxPending: maxPending)
            sortedKeys.insert(key, at: insertionIndex(of: key))
            outcome.opened = key
        }
        let emissions = update(key, now: now) { buffer in
            switch input {
            case .hello(let nextSeq): buffer.noteHello(nextSeq: nextSeq, at: now)
            case .result(let seq, let payload, let bytes): buffer.receive(seq: seq, payload: payload, bytes: bytes, at: now)
            case .skip(let firstSeq, let count, let reason): buffer.skip(firstSeq: firstSeq, count: count, reason: reason, at: now)
            case .end(let nextSeq): buffer.end(nextSeq: nextSeq, at: now)
            }
        }
        if !emissions.isEmpty { outcome.emissions.append((key, emissions)) }
        return outcome
    }

    /// Gives up on missing frames whose wait is over, in every open key.
    public mutating func tick(at now: UInt64) -> [(key: Key, emissions: [Emission])] {
        var out: [(key: Key, emissions: [Emission])] = []
        for key in openKeys {
            let emissions = update(key, now: now) { $0.tick(at: now) }
            if !emissions.isEmpty { out.append((key, emissions)) }
        }
        return out
    }

    /// Closes an open key at once (`--stream-idle-timeout`): buffered results are emitted, every missing sequence
    /// up to the highest known one (or the received end) drops with `reason`, then its end. `[]` if not open.
    public mutating func close(_ key: Key, reason: DropReason, at now: UInt64) -> [Emission] {
        update(key, now: now) { $0.flush(reason: reason) }
    }

    /// The ended (stream, epoch) pairs remembered, sorted (a standby refuses their stragglers after a failover).
    public var endedKeys: [Key] { ended.keys.sorted() }

    /// Whether `key` ended and is remembered.
    public func hasEnded(_ key: Key) -> Bool { ended[key] != nil }

    /// Puts back a (stream, epoch) another collector had open (failover): `buffer` becomes its buffer, and its epoch
    /// the stream's newest unless a newer one is known. False (nothing changes) if the key is open or ended already.
    @discardableResult
    public mutating func restore(_ key: Key, buffer: ReorderBuffer<Payload>) -> Bool {
        guard buffers[key] == nil, ended[key] == nil else { return false }
        buffers[key] = buffer
        sortedKeys.insert(key, at: insertionIndex(of: key))
        newestEpoch[key.stream] = max(newestEpoch[key.stream] ?? key.epoch, key.epoch)
        return true
    }

    /// Remembers that `key` ended (another collector published its end), refusing its stragglers. Bounded as ends are.
    public mutating func rememberEnded(_ key: Key, at now: UInt64) {
        guard buffers[key] == nil else { return }
        ended[key] = now
        newestEpoch[key.stream] = max(newestEpoch[key.stream] ?? key.epoch, key.epoch)
        trimEnded()
        forgetClosedStreams()
    }

    /// Where `key` goes in `sortedKeys` (binary search).
    private func insertionIndex(of key: Key) -> Int {
        var (low, high) = (0, sortedKeys.count)
        while low < high {
            let middle = low + (high - low) / 2
            if sortedKeys[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Runs `body` on the buffer of `key` in place (a copy taken out of the dictionary would make every result copy
    /// the buffer's pending results), then forgets the buffer if it finished.
    private mutating func update(_ key: Key, now: UInt64, _ body: (inout ReorderBuffer<Payload>) -> [Emission]) -> [Emission] {
        guard let index = buffers.index(forKey: key) else { return [] }
        let before = buffers.values[index].pendingBytes
        let emissions = body(&buffers.values[index])
        pendingBytes = pendingBytes &- before &+ buffers.values[index].pendingBytes
        if buffers.values[index].isFinished {
            buffers[key] = nil
            let position = insertionIndex(of: key)
            if position < sortedKeys.count, sortedKeys[position] == key { sortedKeys.remove(at: position) }
            ended = ended.filter { now &- $0.value < endedMemory }
            ended[key] = now
            trimEnded()
            // Forget the newest epoch of streams with nothing open or remembered (bounded by open + ended keys).
            forgetClosedStreams()
        }
        return emissions
    }

    /// Bounds the ended keys in number too (8 × maxOpen): a flood of short streams forgets the oldest ends first.
    private mutating func trimEnded() {
        let limit = maxEndedRemembered
        if ended.count > limit {
            let keep = ended.sorted { ($0.value, $0.key) > ($1.value, $1.key) }.prefix(limit / 2)
            ended = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
        }
    }

    /// Forgets the newest epoch of streams with nothing open or remembered.
    private mutating func forgetClosedStreams() {
        newestEpoch = newestEpoch.filter {
            let newest = Key(stream: $0.key, epoch: $0.value)
            return buffers[newest] != nil || ended[newest] != nil
        }
    }
}
