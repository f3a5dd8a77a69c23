import Testing
@testable import FacewireCollectorCore

/// Runs of dropped sequences of any length cost one emission and O(1) memory (SPEC.md 9.1, 14.3).
@Suite("ReorderBuffer runs")
struct ReorderBufferRunTests {
    @Test func aSkipOfTwoToTheFortyIsOneEmission() {
        var buffer = makeBuffer()
        _ = buffer.noteHello(nextSeq: 0, at: 0)
        let out = buffer.skip(firstSeq: 0, count: 1 << 40, reason: "no-worker", at: ms(1))
        #expect(out == [.dropped(seqs: 0..<(1 << 40), reason: "no-worker")])
        #expect(buffer.head == 1 << 40)
        #expect(buffer.counters.dropped == 1 << 40 && buffer.counters.emitted == 1 << 40)
        #expect(buffer.receive(1 << 40, at: ms(2)) == ["F1099511627776"])
    }

    @Test func aSkipReachingUInt64MaxSaturates() {
        var buffer = makeBuffer()
        _ = buffer.noteHello(nextSeq: 0, at: 0)
        let out = buffer.skip(firstSeq: 0, count: .max, reason: "no-worker", at: ms(1))
        #expect(out == [.dropped(seqs: 0..<UInt64.max, reason: "no-worker")])
        #expect(buffer.counters.emitted == .max)
        // Nothing can follow: the last sequence is never valid.
        #expect(buffer.receive(.max, at: ms(2)) == [])
        #expect(buffer.counters.late == 1)
    }

    @Test func anEndAtTwoToTheSixtyThreeDropsOneRunAfterTheDelay() {
        var buffer = makeBuffer()
        _ = buffer.noteHello(nextSeq: 0, at: 0)
        #expect(buffer.receive(0, at: ms(1)) == ["F0"])
        #expect(buffer.end(nextSeq: 1 << 63, at: ms(2)).isEmpty)
        let out = buffer.tick(at: ms(102))
        #expect(out == [.dropped(seqs: 1..<(1 << 63), reason: .timeout), .end(buffer.counters, nextSeq: 1 << 63)])
        #expect(buffer.counters.emitted == 1 << 63)
    }

    @Test func aResultFarAheadDropsTheGapAsOneRun() {
        var buffer = makeBuffer()
        _ = buffer.noteHello(nextSeq: 0, at: 0)
        #expect(buffer.receive(1 << 40, at: ms(1)) == [])
        let out = buffer.tick(at: ms(101))
        #expect(out.count == 2)
        #expect(out.first == .dropped(seqs: 0..<(1 << 40), reason: .timeout))
        #expect(out.last?.seq == 1 << 40)
    }

    @Test func storedSkipRunsAreBoundedByMaxPending() {
        var buffer = makeBuffer(maxPending: 8)
        _ = buffer.noteHello(nextSeq: 0, at: 0)
        // Disjoint runs with gaps between them, the head missing: at most 8 runs are held.
        var emitted: [Emission] = []
        for index: UInt64 in 0..<1000 {
            emitted += buffer.skip(firstSeq: 10 + index * 3, count: 1, reason: "no-worker", at: ms(1))
        }
        #expect(buffer.pendingCount == 0)
        // The overflow rule gave up the head gaps instead of storing a 9th run.
        #expect(emitted.contains { if case .dropped(_, let reason) = $0 { reason == .overflow } else { false } })
        let seqs = expandedSeqs(emitted)
        #expect(seqs == Array(0..<UInt64(seqs.count)), "in order, each once")
        #expect(buffer.head >= 10 + 991 * 3)
    }
}
