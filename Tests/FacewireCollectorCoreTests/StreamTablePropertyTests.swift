import FacewireFuzzing
import Testing

@testable import FacewireCollectorCore

/// Randomized runs of the collector's whole ordering state, several streams and capture-node restarts included:
/// each stream goes through one to four epochs; a restarted capture node's stragglers keep arriving after the new
/// epoch began, and an old epoch may or may not have sent its end. Frames are lost, skipped, delayed and duplicated as
/// in the buffer's own properties. Every run is reproducible from its seed.
@Suite("StreamTable properties (epochs and restarts)")
struct StreamTablePropertyTests {
    typealias Table = StreamTable<String>
    typealias Key = Table.Key
    static let maxDelay = ms(100)
    static let maxPending = 32

    struct Sent {
        var time: UInt64
        var key: Key
        var input: Table.Input
    }

    struct Scenario {
        var inputs: [Sent] = []
        /// Frames numbered per key (the capture node's count, whether sent, lost or skipped).
        var numbered: [Key: UInt64] = [:]
        var resultsSent = 0
    }

    static func payload(_ key: Key, _ seq: UInt64) -> String { "\(key.stream)/\(key.epoch)/\(seq)" }

    static func makeScenario(seed: UInt64) -> Scenario {
        var rng = SplitMix64(seed: seed)
        var scenario = Scenario()
        let interval = ms(10)
        for stream in ["a", "b", "c"].prefix(Int.random(in: 1...3, using: &rng)) {
            var start = UInt64.random(in: 0..<ms(50), using: &rng)
            var epoch = UInt64.random(in: 1...1000, using: &rng)
            let epochs = Int.random(in: 1...4, using: &rng)
            for index in 0..<epochs {
                let key = Key(stream: stream, epoch: epoch)
                let isLast = index == epochs - 1
                let frames = UInt64.random(in: 1...60, using: &rng)
                // A restarted node may be killed before it numbered all its frames: the next epoch starts early.
                let killedAt: UInt64? = isLast || Bool.random(using: &rng) ? nil : UInt64.random(in: 0..<frames, using: &rng)
                let numbered = killedAt ?? frames
                scenario.numbered[key] = numbered
                if Int.random(in: 0..<100, using: &rng) < 70 {
                    scenario.inputs.append(Sent(time: start, key: key, input: .hello(nextSeq: 0)))
                }
                var seq: UInt64 = 0
                while seq < numbered {
                    let sentAt = start + seq * interval + UInt64.random(in: 0..<ms(1), using: &rng)
                    let fate = Int.random(in: 0..<100, using: &rng)
                    if fate < 8 {
                        seq += 1  // lost
                    } else if fate < 14 {
                        let count = min(UInt64.random(in: 1...4, using: &rng), numbered - seq)
                        scenario.inputs.append(Sent(time: sentAt, key: key, input: .skip(firstSeq: seq, count: count, reason: "no-worker")))
                        seq += count
                    } else {
                        let latency = workerLatency(using: &rng)
                        let copies = Int.random(in: 0..<100, using: &rng) < 5 ? 2 : 1
                        for copy in 0..<copies {
                            let extra = copy == 0 ? 0 : UInt64.random(in: 0..<ms(200), using: &rng)
                            scenario.inputs.append(
                                Sent(time: sentAt + latency + extra, key: key, input: .result(seq: seq, payload: payload(key, seq))))
                            scenario.resultsSent += 1
                        }
                        seq += 1
                    }
                }
                let stopAt = start + numbered * interval + ms(1)
                if killedAt == nil {
                    scenario.inputs.append(Sent(time: stopAt, key: key, input: .end(nextSeq: numbered)))
                }
                // The next epoch: a restart shortly after this node stopped (or was killed), possibly while its
                // results are still on their way.
                start = stopAt + UInt64.random(in: 0..<ms(120), using: &rng)
                epoch += UInt64.random(in: 1...1_000_000, using: &rng)
            }
        }
        scenario.inputs = scenario.inputs.enumerated()
            .sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
            .map(\.element)
        return scenario
    }

    @Test("many streams, restarts and stragglers: ordered, exactly once, every epoch ended, nothing lost silently",
          arguments: 0..<120 as Range<UInt64>)
    func invariants(seed: UInt64) {
        let scenario = Self.makeScenario(seed: seed)
        var table = Table(maxDelayNanoseconds: Self.maxDelay, maxPending: Self.maxPending)
        var emitted: [Key: [Table.Emission]] = [:]
        var opened: [Key] = []
        var replacedAt: [Key: UInt64] = [:]
        var endedAt: [Key: UInt64] = [:]
        var lastInputAt: [Key: UInt64] = [:]
        var rejectedResults = 0

        func record(_ batches: [(key: Key, emissions: [Table.Emission])], at now: UInt64) {
            for (key, emissions) in batches {
                #expect(endedAt[key] == nil, "seed \(seed): \(key) emitted after its end")
                emitted[key, default: []] += emissions
                if emissions.contains(where: { if case .end = $0 { true } else { false } }) { endedAt[key] = now }
            }
        }

        var index = 0
        var now: UInt64 = 0
        let lastInput = scenario.inputs.last?.time ?? 0
        while now <= lastInput + 4 * Self.maxDelay {
            while index < scenario.inputs.count, scenario.inputs[index].time <= now {
                let sent = scenario.inputs[index]
                index += 1
                let outcome = table.apply(sent.input, stream: sent.key.stream, epoch: sent.key.epoch, at: now)
                if let rejection = outcome.rejected {
                    #expect(outcome.emissions.isEmpty && outcome.opened == nil)
                    if case .result = sent.input { rejectedResults += 1 }
                    // A straggler is refused only once its epoch ended, or when a newer one began before the
                    // collector heard anything of its own: an open epoch takes its frames still in flight.
                    #expect(rejection != .afterEnd || endedAt[sent.key] != nil, "seed \(seed): \(sent.key) refused while open")
                } else {
                    lastInputAt[sent.key] = now
                }
                if let key = outcome.opened {
                    #expect(!opened.contains(key), "seed \(seed): \(key) opened twice")
                    // Never a key of an older epoch than one already opened for the stream.
                    #expect(!opened.contains { $0.stream == key.stream && $0.epoch > key.epoch }, "seed \(seed): \(key) reopened an old epoch")
                    opened.append(key)
                }
                for old in outcome.replaced { replacedAt[old] = replacedAt[old] ?? now }
                record(outcome.emissions, at: now)
            }
            for key in table.openKeys {
                #expect((table.buffer(key)?.pendingCount ?? 0) <= Self.maxPending, "seed \(seed): memory bound")
            }
            record(table.tick(at: now), at: now)
            // The open keys (kept sorted as keys open and close) are exactly the opened ones not yet ended, in order.
            let keys = table.openKeys
            #expect(keys == Set(opened).subtracting(endedAt.keys).sorted(), "seed \(seed): open keys \(keys)")
            #expect(keys.count == table.openCount && keys.allSatisfy { table.buffer($0) != nil }, "seed \(seed): open keys \(keys)")
            now += ms(1)
        }

        #expect(table.openKeys.isEmpty, "seed \(seed): still open at the end: \(table.openKeys)")
        var accounted = 0
        for key in opened {
            let out = emitted[key] ?? []
            // Exactly one end, last.
            let ends = out.indices.filter { if case .end = out[$0] { true } else { false } }
            #expect(ends == [out.count - 1], "seed \(seed): \(key) ends at \(ends) of \(out.count)")
            // Consecutive sequences, each once, never beyond what the capture node numbered.
            let seqs = expandedSeqs(out)
            if let first = seqs.first {
                #expect(seqs == Array(first..<(first + UInt64(seqs.count))), "seed \(seed): \(key) out of order")
                #expect(seqs.last! < (scenario.numbered[key] ?? 0), "seed \(seed): \(key) emitted beyond its frames")
            }
            for emission in out {
                if case .frame(let seq, let payload) = emission {
                    #expect(payload == Self.payload(key, seq), "seed \(seed): wrong payload at \(key) \(seq)")
                }
                if case .end(let counters, _) = emission {
                    #expect(counters.emitted == counters.processed + counters.dropped)
                    #expect(counters.emitted == UInt64(seqs.count))
                    accounted += Int(counters.processed + counters.late + counters.duplicates)
                }
            }
            // A replaced epoch ends within --max-delay of its replacement or of its last input, whichever is later
            // (plus the tick): it waits for its frames in flight, and no longer.
            if let replaced = replacedAt[key], let ended = endedAt[key] {
                let quietFrom = max(replaced, lastInputAt[key] ?? replaced)
                #expect(ended <= quietFrom + Self.maxDelay + ms(1), "seed \(seed): \(key) took \(ended - quietFrom) ns to end after its last input")
            }
        }
        // Nothing lost silently: every result sent was emitted, counted late or duplicate by its epoch, or refused
        // (a straggler of a replaced or ended epoch).
        #expect(accounted + rejectedResults == scenario.resultsSent, "seed \(seed): \(accounted) + \(rejectedResults) != \(scenario.resultsSent)")
    }

    @Test("an ended epoch stays ended: its stragglers are refused and counted, never reopen it")
    func endedEpochStaysEnded() {
        var table = Table(maxDelayNanoseconds: Self.maxDelay, maxPending: Self.maxPending)
        let key = Key(stream: "s", epoch: 5)
        _ = table.apply(.hello(nextSeq: 0), stream: "s", epoch: 5, at: 0)
        _ = table.apply(.result(seq: 0, payload: "x"), stream: "s", epoch: 5, at: 1)
        let end = table.apply(.end(nextSeq: 1), stream: "s", epoch: 5, at: 2)
        #expect(end.emissions.contains { $0.key == key })
        #expect(table.openKeys.isEmpty)
        #expect(table.apply(.result(seq: 0, payload: "x"), stream: "s", epoch: 5, at: 3).rejected == .afterEnd)
        // A newer epoch opens; the older one is then refused as stale, whether or not it ended.
        #expect(table.apply(.hello(nextSeq: 0), stream: "s", epoch: 9, at: 4).opened == Key(stream: "s", epoch: 9))
        #expect(table.apply(.result(seq: 3, payload: "y"), stream: "s", epoch: 7, at: 5).rejected == .staleEpoch)
        #expect(table.openKeys == [Key(stream: "s", epoch: 9)])
    }

    @Test("a restarted node's frames still at workers are published, not refused: superseded drops only for what never came")
    func supersededEpochTakesItsFramesInFlight() {
        var table = Table(maxDelayNanoseconds: Self.maxDelay, maxPending: Self.maxPending)
        let old = Key(stream: "s", epoch: 1)
        var out: [String] = []
        func run(_ outcome: Table.Outcome) {
            for (key, emissions) in outcome.emissions where key == old { out += render(emissions) }
        }
        run(table.apply(.hello(nextSeq: 0), stream: "s", epoch: 1, at: 0))
        for seq: UInt64 in 0..<3 { run(table.apply(.result(seq: seq, payload: "p\(seq)"), stream: "s", epoch: 1, at: ms(10) * seq)) }
        // The node numbered up to 7 (its last hello), then crashed; 3, 5 and 6 are still at workers, 4 and 7 are lost.
        run(table.apply(.hello(nextSeq: 8), stream: "s", epoch: 1, at: ms(30)))
        // It restarts: a newer epoch begins before the old one's frames in flight are back.
        let restart = table.apply(.hello(nextSeq: 0), stream: "s", epoch: 2, at: ms(40))
        #expect(restart.replaced == [old])
        run(restart)
        #expect(table.openKeys.contains(old), "the old epoch waits for its frames in flight")
        for (seq, at) in [(UInt64(3), ms(60)), (5, ms(90)), (6, ms(120))] {
            let outcome = table.apply(.result(seq: seq, payload: "p\(seq)"), stream: "s", epoch: 1, at: at)
            #expect(outcome.rejected == nil, "seq \(seq) of the superseded epoch is taken")
            run(outcome)
        }
        var now = ms(120)
        while table.openKeys.contains(old), now < ms(1000) {
            now += ms(1)
            for (key, emissions) in table.tick(at: now) where key == old { out += render(emissions) }
        }
        // 4 drops when its deadline passes after 5 was known; 7 (announced by the hello, never back) once the epoch
        // stayed quiet for --max-delay; then the summary.
        #expect(out == ["F0", "F1", "F2", "F3", "D4:superseded", "F5", "F6", "D7:superseded", "E"], "\(out)")
        #expect(now <= ms(120) + Self.maxDelay + ms(1))
        #expect(table.apply(.result(seq: 7, payload: "late"), stream: "s", epoch: 1, at: now + 1).rejected == .afterEnd)
    }

    @Test("a superseded epoch whose hello announced next_seq 2^64-1 ends with one superseded run: no trap, O(1)")
    func absurdAnnouncedNextSeq() {
        var table = Table(maxDelayNanoseconds: Self.maxDelay, maxPending: Self.maxPending)
        let old = Key(stream: "s", epoch: 1)
        var out: [Table.Emission] = []
        for (input, epoch, at) in [
            (Table.Input.hello(nextSeq: 0), UInt64(1), UInt64(0)), (.result(seq: 0, payload: "p0"), 1, ms(1)),
            (.hello(nextSeq: .max), 1, ms(2)), (.hello(nextSeq: 0), 2, ms(3)),
        ] {
            for (key, emissions) in table.apply(input, stream: "s", epoch: epoch, at: at).emissions where key == old { out += emissions }
        }
        var now = ms(3)
        while table.openKeys.contains(old), now < ms(1000) {
            now += ms(1)
            for (key, emissions) in table.tick(at: now) where key == old { out += emissions }
        }
        #expect(out.count == 3, "\(out.count) emissions")
        #expect(out.first == .frame(seq: 0, payload: "p0"))
        #expect(out.dropFirst().first == .dropped(seqs: 1..<UInt64.max, reason: .superseded))
        guard case .end(let counters, _)? = out.last else {
            Issue.record("no end")
            return
        }
        #expect(counters.emitted == .max && counters.dropped == .max - 1 && counters.processed == 1)
    }

    @Test("an old epoch known only by its hello still takes the results in flight, then ends empty after --max-delay")
    func helloOnlyEpochWaitsForItsFramesInFlight() {
        var table = Table(maxDelayNanoseconds: Self.maxDelay, maxPending: Self.maxPending)
        let old = Key(stream: "s", epoch: 1)
        _ = table.apply(.hello(nextSeq: 0), stream: "s", epoch: 1, at: 0)
        // The node died right after sending two frames; its successor says hello before their results are back.
        let outcome = table.apply(.hello(nextSeq: 0), stream: "s", epoch: 2, at: ms(5))
        #expect(outcome.replaced == [old])
        #expect(outcome.emissions.allSatisfy { $0.key != old }, "nothing of the old epoch is published yet")
        var out: [String] = []
        for (seq, at) in [(UInt64(0), ms(40)), (1, ms(60))] {
            let taken = table.apply(.result(seq: seq, payload: "p\(seq)"), stream: "s", epoch: 1, at: at)
            #expect(taken.rejected == nil)
            for (key, emissions) in taken.emissions where key == old { out += render(emissions) }
        }
        var now = ms(60)
        while table.openKeys.contains(old), now < ms(1000) {
            now += ms(1)
            for (key, emissions) in table.tick(at: now) where key == old { out += render(emissions) }
        }
        #expect(out == ["F0", "F1", "E"], "\(out)")
        #expect(now <= ms(60) + Self.maxDelay + ms(1))
        // An epoch that gets nothing more ends empty, --max-delay after it was superseded.
        _ = table.apply(.hello(nextSeq: 0), stream: "s", epoch: 3, at: now)
        var empty: [String] = []
        var later = now
        while table.openKeys.contains(Key(stream: "s", epoch: 2)), later < now + ms(1000) {
            later += ms(1)
            for (key, emissions) in table.tick(at: later) where key == Key(stream: "s", epoch: 2) { empty += render(emissions) }
        }
        #expect(empty == ["E"] && later <= now + Self.maxDelay + ms(1), "\(empty) at \(later - now)")
    }

    @Test("epochs chained faster than --max-delay open at most twice maxOpen buffers")
    func chainedEpochsAreBounded() {
        var table = Table(maxDelayNanoseconds: Self.maxDelay, maxPending: Self.maxPending, maxOpen: 4)
        // Each result of a newer epoch replaces the open one, which keeps waiting for its gap below seq 5.
        for epoch in UInt64(1)...1000 {
            _ = table.apply(.result(seq: 5, payload: "x"), stream: "s", epoch: epoch, at: epoch)
            #expect(table.openCount <= 8)
        }
        #expect(table.apply(.result(seq: 5, payload: "x"), stream: "t", epoch: 1, at: 2000).rejected == .full)
    }

    @Test("ended epochs are remembered at most 8 x maxOpen")
    func endedMemoryIsBounded() {
        var table = Table(maxDelayNanoseconds: Self.maxDelay, maxPending: Self.maxPending, maxOpen: 4)
        for index in 0..<1000 {
            _ = table.apply(.end(nextSeq: 0), stream: "s\(index)", epoch: 1, at: UInt64(index))
            #expect(table.rememberedEndCount <= 32)
        }
        #expect(table.openCount == 0)
        // The newest ends are still refused as stragglers.
        #expect(table.apply(.result(seq: 0, payload: "x"), stream: "s999", epoch: 1, at: 2000).rejected == .afterEnd)
    }
}
