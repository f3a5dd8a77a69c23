import FacewireFuzzing
import Testing
@testable import FacewireCollectorCore

/// Randomized end-to-end runs of the reorder buffer against a simulated capture node and
/// workers: frames are lost, skipped at the source, delayed (some far beyond `maxDelay`),
/// delivered twice, and arrive in a random order. Every run is reproducible from its seed.
@Suite("ReorderBuffer properties")
struct ReorderBufferPropertyTests {
    static let maxDelay = ms(100)
    static let skipReason = DropReason("no_worker")

    enum Input {
        case hello(nextSeq: UInt64)
        case result(UInt64)
        case skip(first: UInt64, count: UInt64)
        case end(nextSeq: UInt64)
    }

    struct Scenario {
        var frameCount: UInt64
        /// Inputs sorted by time (stable for equal times).
        var inputs: [(time: UInt64, input: Input)]
        var lost: Set<UInt64> = []
        var skipped: Set<UInt64> = []
        /// First arrival time of each delivered result.
        var firstArrival: [UInt64: UInt64] = [:]
        var deliveries = 0
        var endTime: UInt64 = 0

        /// The earliest time the collector could know of any sequence beyond `seq`.
        func knownAfter(_ seq: UInt64) -> UInt64 {
            var earliest = endTime
            for (time, input) in inputs {
                switch input {
                case .result(let s) where s > seq: earliest = min(earliest, time)
                case .skip(let first, let count) where first + count - 1 > seq: earliest = min(earliest, time)
                default: break
                }
            }
            return earliest
        }
    }

    static func makeScenario(seed: UInt64, withHello: Bool) -> Scenario {
        var rng = SplitMix64(seed: seed)
        let n = UInt64.random(in: 1...200, using: &rng)
        let interval = ms(10)
        var scenario = Scenario(frameCount: n, inputs: [])
        var inputs: [(time: UInt64, input: Input)] = []
        if withHello { inputs.append((0, .hello(nextSeq: 0))) }
        var seq: UInt64 = 0
        while seq < n {
            let sentAt = seq * interval + UInt64.random(in: 0..<ms(1), using: &rng)
            let fate = Int.random(in: 0..<100, using: &rng)
            if fate < 8 {
                scenario.lost.insert(seq)
                seq += 1
            } else if fate < 14 {
                // The capture node skips a short run and says so at once.
                let count = min(UInt64.random(in: 1...4, using: &rng), n - seq)
                for s in seq..<(seq + count) { scenario.skipped.insert(s) }
                inputs.append((sentAt, .skip(first: seq, count: count)))
                seq += count
            } else {
                let latency = workerLatency(using: &rng)
                inputs.append((sentAt + latency, .result(seq)))
                scenario.firstArrival[seq] = sentAt + latency
                scenario.deliveries += 1
                if Int.random(in: 0..<100, using: &rng) < 5 {
                    inputs.append((sentAt + latency + UInt64.random(in: 0..<ms(200), using: &rng), .result(seq)))
                    scenario.deliveries += 1
                }
                seq += 1
            }
        }
        scenario.endTime = n * interval + ms(1)
        inputs.append((scenario.endTime, .end(nextSeq: n)))
        // Stable sort by time keeps the generation order for equal times.
        scenario.inputs = inputs.enumerated()
            .sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
            .map(\.element)
        return scenario
    }

    struct Run {
        var emissions: [Emission] = []
        var buffer: Buffer
    }

    /// Feeds the scenario to a buffer, ticking every millisecond, and checks at every tick
    /// that `nextDeadline` predicts exactly whether the tick emits.
    static func run(_ scenario: Scenario, maxPending: Int) -> Run {
        var run = Run(buffer: Buffer(maxDelayNanoseconds: maxDelay, maxPending: maxPending))
        var index = 0
        var now: UInt64 = 0
        let giveUpAt = (scenario.inputs.last?.time ?? 0) + 3 * maxDelay
        while !run.buffer.isFinished && now <= giveUpAt {
            while index < scenario.inputs.count && scenario.inputs[index].time <= now {
                let (time, input) = scenario.inputs[index]
                index += 1
                let out: [Emission] =
                    switch input {
                    case .hello(let next): run.buffer.noteHello(nextSeq: next, at: time)
                    case .result(let seq): run.buffer.receive(seq: seq, payload: payload(seq), at: time)
                    case .skip(let first, let count):
                        run.buffer.skip(firstSeq: first, count: count, reason: skipReason, at: time)
                    case .end(let next): run.buffer.end(nextSeq: next, at: time)
                    }
                run.emissions += out
                #expect(run.buffer.pendingCount <= maxPending)
            }
            let deadline = run.buffer.nextDeadline
            let out = run.buffer.tick(at: now)
            if let deadline, now >= deadline {
                #expect(!out.isEmpty, "tick at its deadline \(deadline) emitted nothing")
            } else {
                #expect(out.isEmpty, "tick at \(now) before deadline \(String(describing: deadline)) emitted \(render(out))")
            }
            run.emissions += out
            now += ms(1)
        }
        // Whatever arrives after the end (late duplicates) is still fed and counted.
        while index < scenario.inputs.count {
            let (time, input) = scenario.inputs[index]
            index += 1
            if case .result(let seq) = input {
                #expect(run.buffer.receive(seq: seq, payload: payload(seq), at: time).isEmpty)
            }
        }
        return run
    }

    /// Checks that hold whatever the limits: order, exactly once, one final end, accounting.
    static func checkInvariants(_ scenario: Scenario, _ run: Run) {
        let buffer = run.buffer
        #expect(buffer.isFinished)
        guard let base = buffer.base else {
            Issue.record("no base")
            return
        }
        // Exactly one end, last, carrying the final counters (late results after it aside).
        let ends = run.emissions.indices.filter { if case .end = run.emissions[$0] { true } else { false } }
        #expect(ends == [run.emissions.count - 1])
        // Every sequence from base to the end exactly once, strictly increasing.
        let seqs = expandedSeqs(run.emissions)
        #expect(seqs == Array(base..<scenario.frameCount))
        var processed: UInt64 = 0
        for emission in run.emissions {
            switch emission {
            case .frame(let seq, let payload):
                processed += 1
                #expect(payload == FacewireCollectorCoreTests.payload(seq))
                #expect(scenario.firstArrival[seq] != nil, "processed \(seq) was never delivered")
            case .dropped(let seqs, let reason):
                #expect(!seqs.isEmpty, "an empty run was emitted")
                for seq in seqs {
                    if scenario.skipped.contains(seq) {
                        #expect(reason == skipReason, "skipped \(seq) dropped as \(reason)")
                    } else {
                        #expect(reason == .timeout || reason == .overflow)
                    }
                }
            case .end(let counters, let nextSeq):
                #expect(nextSeq == scenario.frameCount, "the end names the sequence after the last one emitted")
                #expect(counters.emitted == scenario.frameCount - base)
                #expect(counters.processed == processed)
                #expect(counters.emitted == counters.processed + counters.dropped)
            }
        }
        // Nothing lost silently: each delivery was processed, or counted late or duplicate.
        let counters = buffer.counters
        #expect(UInt64(scenario.deliveries) == counters.processed + counters.late + counters.duplicates)
    }

    @Test("random arrival order, losses, skips and delays", arguments: 0..<100 as Range<UInt64>)
    func randomRunsWithHello(seed: UInt64) {
        let scenario = Self.makeScenario(seed: seed, withHello: true)
        let run = Self.run(scenario, maxPending: 10_000)
        Self.checkInvariants(scenario, run)
        #expect(run.buffer.base == 0)
        // Every frame that arrived before it could have been given up was processed.
        var processed = Set<UInt64>()
        for case .frame(let seq, _) in run.emissions { processed.insert(seq) }
        for (seq, arrival) in scenario.firstArrival where arrival < scenario.knownAfter(seq) + Self.maxDelay {
            #expect(processed.contains(seq), "seed \(seed): \(seq) arrived in time but was not processed")
        }
        // And every frame that arrived after its deadline was dropped (never emitted early).
        for (seq, arrival) in scenario.firstArrival where arrival > scenario.knownAfter(seq) + Self.maxDelay + ms(1) {
            #expect(!processed.contains(seq), "seed \(seed): \(seq) arrived after its deadline but was processed")
        }
    }

    @Test("without a hello the base settles on what arrived first", arguments: 100..<160 as Range<UInt64>)
    func randomRunsWithoutHello(seed: UInt64) throws {
        let scenario = Self.makeScenario(seed: seed, withHello: false)
        let run = Self.run(scenario, maxPending: 10_000)
        Self.checkInvariants(scenario, run)
        // Neither can be missing: every scenario ends with a StreamEnd input, and a finished buffer has settled a base.
        let base = try #require(run.buffer.base, "seed \(seed): no base after the run")
        let first = try #require(scenario.inputs.first?.time, "seed \(seed): a scenario without inputs")
        // Everything that arrived before the base could settle is at or above it.
        for (time, input) in scenario.inputs where time < first + Self.maxDelay {
            switch input {
            case .result(let seq), .skip(let seq, _): #expect(base <= seq)
            default: break
            }
        }
        if scenario.firstArrival[0] != nil || scenario.skipped.contains(0) {
            // Sequence 0 arrives eventually; if it came before settling the base is 0.
            let zeroAt = scenario.firstArrival[0] ?? scenario.inputs.first { if case .skip(0, _) = $0.input { true } else { false } }!.time
            if zeroAt < first + Self.maxDelay { #expect(base == 0) }
        }
    }

    @Test("small maxPending bounds the buffer and keeps the invariants", arguments: 200..<260 as Range<UInt64>)
    func randomRunsWithOverflow(seed: UInt64) {
        let scenario = Self.makeScenario(seed: seed, withHello: true)
        let maxPending = Int(seed % 6)  // 0...5
        let run = Self.run(scenario, maxPending: maxPending)
        Self.checkInvariants(scenario, run)
        #expect(run.buffer.base == 0)
    }
}
