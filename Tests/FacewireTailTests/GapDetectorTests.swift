import FacewireTail
import Testing

@Suite("GapDetector (frames a subscriber never received)")
struct GapDetectorTests {
    @Test func consecutiveFramesAreNoGap() {
        var gaps = GapDetector()
        for seq in UInt64(0)..<50 { #expect(gaps.observe(stream: "a", epoch: 1, seq: seq) == 0) }
        #expect(gaps.missed == 0)
    }

    @Test func joiningMidStreamIsNoGap() {
        var gaps = GapDetector()
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 1000) == 0)
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 1001) == 0)
    }

    @Test func aJumpCountsTheMissingFramesPerStreamAndEpoch() {
        var gaps = GapDetector()
        _ = gaps.observe(stream: "a", epoch: 1, seq: 0)
        _ = gaps.observe(stream: "b", epoch: 1, seq: 0)
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 5) == 4)
        #expect(gaps.observe(stream: "b", epoch: 1, seq: 1) == 0, "streams are independent")
        #expect(gaps.observe(stream: "a", epoch: 2, seq: 0) == 0, "a new epoch starts afresh")
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 7) == 1)
        #expect(gaps.missed == 5)
        // A repeated or older sequence (which the collector never sends) is not a gap and does not move the mark back.
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 3) == 0)
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 8) == 0)
    }

    @Test func anEndedEpochIsForgotten() {
        var gaps = GapDetector()
        _ = gaps.observe(stream: "a", epoch: 1, seq: 0)
        gaps.finish(stream: "a", epoch: 1)
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 9) == 0)
        #expect(gaps.missed == 0)
    }

    @Test func aDroppedRunIsNoGapAndMovesTheMark() {
        var gaps = GapDetector()
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 0) == 0)
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 1, runLength: 1 << 40) == 0)
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 1 + (1 << 40)) == 0, "the run stood for every sequence before it")
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 5 + (1 << 40)) == 3)
        // A run to the very end saturates instead of trapping.
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 10 + (1 << 40), runLength: .max) == 4)
        #expect(gaps.observe(stream: "a", epoch: 1, seq: .max) == 0)
        #expect(gaps.missed == 7)
    }
}
