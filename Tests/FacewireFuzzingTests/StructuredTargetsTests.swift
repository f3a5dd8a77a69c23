import Testing

@testable import FacewireFuzzing

/// The structure-aware targets (the fuzzer's bytes become sequences of valid messages with hostile values, driven
/// through a node's pure core) on a fixed set of pseudo-random inputs: a short deterministic run in the suite. The
/// targets check their invariants with preconditions, so a broken one stops the suite; the long coverage-guided
/// run is `scripts/fuzz.sh`.
@Suite("Structure-aware fuzz targets (short, deterministic)")
struct StructuredTargetsTests {
    /// `count` inputs of 0–`maxLength` bytes from a fixed seed.
    static func inputs(count: Int, maxLength: Int, seed: UInt64) -> [[UInt8]] {
        var state = seed
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 24
        }
        return (0..<count).map { _ in (0..<Int(next() % UInt64(maxLength + 1))).map { _ in UInt8(truncatingIfNeeded: next()) } }
    }

    @Test("worker frame handling: every kind of answer is reached, no promise broken")
    func workerFrames() {
        var tally = WorkerFrameTarget.Tally()
        for input in Self.inputs(count: 400, maxLength: 600, seed: 12) { tally += WorkerFrameTarget.run(input) }
        #expect(tally.rejected > 0)
        #expect(tally.processed > 0)
        #expect(tally.stale > 0)
        #expect(tally.errors > 0)
    }

    @Test("collector core: frames, long runs, ends and refusals are reached, no promise broken")
    func collector() {
        var tally = CollectorCoreTarget.Tally()
        for input in Self.inputs(count: 300, maxLength: 1500, seed: 7) { tally += CollectorCoreTarget.run(input) }
        #expect(tally.frames > 0)
        #expect(tally.runs > 0)
        #expect(tally.ends > 0)
        #expect(tally.refusals > 0)
    }
}
