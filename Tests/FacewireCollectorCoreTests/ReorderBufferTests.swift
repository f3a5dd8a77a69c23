import Testing
@testable import FacewireCollectorCore

@Suite("ReorderBuffer")
struct ReorderBufferTests {
    // MARK: Ordering

    @Test func inOrderResultsPassStraightThrough() {
        var buffer = makeBuffer()
        for seq: UInt64 in 0..<5 {
            #expect(buffer.receive(seq, at: ms(seq)) == ["F\(seq)"])
        }
        #expect(buffer.head == 5)
        #expect(buffer.base == 0)
        #expect(buffer.pendingCount == 0)
        #expect(buffer.counters == StreamCounters(emitted: 5, processed: 5, dropped: 0, late: 0, duplicates: 0))
        #expect(buffer.nextDeadline == nil)
    }

    @Test func payloadIsCarriedThrough() {
        var buffer = makeBuffer()
        #expect(buffer.receive(seq: 0, payload: "hello", at: 0) == [.frame(seq: 0, payload: "hello")])
    }

    @Test func outOfOrderArrivalIsEmittedInOrder() {
        var buffer = makeBuffer()
        #expect(buffer.receive(0, at: ms(0)) == ["F0"])
        #expect(buffer.receive(3, at: ms(1)) == [])
        #expect(buffer.receive(2, at: ms(2)) == [])
        #expect(buffer.pendingCount == 2)
        #expect(buffer.receive(1, at: ms(3)) == ["F1", "F2", "F3"])
        #expect(buffer.receive(5, at: ms(4)) == [])
        #expect(buffer.receive(4, at: ms(5)) == ["F4", "F5"])
        #expect(buffer.counters.processed == 6)
        #expect(buffer.counters.dropped == 0)
    }

    // MARK: Timeouts

    @Test func missingFrameIsDroppedMaxDelayAfterTheLaterFrameArrived() {
        var buffer = makeBuffer()
        #expect(buffer.receive(0, at: ms(0)) == ["F0"])
        // Nothing later is known: waiting for 1 has no deadline, however long it takes.
        #expect(buffer.nextDeadline == nil)
        #expect(buffer.tick(at: ms(10_000)).isEmpty)
        // 2 arrives at 10 s: 1 is given up 100 ms later, not earlier.
        #expect(buffer.receive(2, at: ms(10_000)) == [])
        #expect(buffer.nextDeadline == ms(10_100))
        #expect(buffer.tick(at: ms(10_050)).isEmpty)
        #expect(buffer.tick(at: ms(10_100) - 1).isEmpty)
        #expect(render(buffer.tick(at: ms(10_100))) == ["D1:timeout", "F2"])
        #expect(buffer.counters == StreamCounters(emitted: 3, processed: 2, dropped: 1, late: 0, duplicates: 0))
        #expect(buffer.nextDeadline == nil)
    }

    @Test func timeoutIsAlsoAppliedByInputsNotOnlyTicks() {
        var buffer = makeBuffer()
        _ = buffer.receive(0, at: 0)
        _ = buffer.receive(2, at: ms(10))
        // No tick in between: the next input, at the deadline, gives 1 up first.
        #expect(buffer.receive(3, at: ms(110)) == ["D1:timeout", "F2", "F3"])
    }

    @Test func deadlineComesFromEarliestLaterArrival() {
        var buffer = makeBuffer()
        _ = buffer.receive(0, at: 0)
        _ = buffer.receive(2, at: ms(10))
        _ = buffer.receive(4, at: ms(30))
        // The deadline is from the earliest arrival among entries beyond the head (2 at 10 ms).
        #expect(buffer.nextDeadline == ms(110))
        #expect(render(buffer.tick(at: ms(110))) == ["D1:timeout", "F2"])
        // Head 3 is missing; 4 arrived at 30 ms.
        #expect(buffer.nextDeadline == ms(130))
        #expect(buffer.tick(at: ms(130) - 1).isEmpty)
        #expect(render(buffer.tick(at: ms(130))) == ["D3:timeout", "F4"])
    }

    @Test func aGapOfSeveralMissingFramesIsDroppedTogether() {
        var buffer = makeBuffer()
        _ = buffer.receive(0, at: 0)
        _ = buffer.receive(4, at: ms(5))
        #expect(render(buffer.tick(at: ms(105))) == ["D1:timeout", "D2:timeout", "D3:timeout", "F4"])
    }

    @Test func lateResultAfterDropIsCountedAndDiscarded() {
        var buffer = makeBuffer()
        _ = buffer.receive(0, at: 0)
        _ = buffer.receive(2, at: ms(1))
        #expect(render(buffer.tick(at: ms(101))) == ["D1:timeout", "F2"])
        #expect(buffer.receive(1, at: ms(102)) == [])
        #expect(buffer.counters.late == 1)
        #expect(buffer.counters.duplicates == 0)
        #expect(buffer.counters.emitted == 3)
        // A result for a processed frame is a duplicate, not late.
        #expect(buffer.receive(2, at: ms(103)) == [])
        #expect(buffer.counters.late == 1)
        #expect(buffer.counters.duplicates == 1)
    }

    @Test func duplicatesAreIgnoredAndCounted() {
        var buffer = makeBuffer()
        #expect(buffer.receive(0, at: 0) == ["F0"])
        #expect(buffer.receive(0, at: 1) == [])  // already emitted
        #expect(buffer.receive(2, at: 2) == [])
        #expect(buffer.receive(seq: 2, payload: "other", at: 3).isEmpty)  // already buffered
        #expect(buffer.pendingCount == 1)
        #expect(buffer.receive(1, at: 4) == ["F1", "F2"])  // the first copy of 2 wins
        #expect(buffer.counters == StreamCounters(emitted: 3, processed: 3, dropped: 0, late: 0, duplicates: 2))
    }

    // MARK: Skips

    @Test func skipRangesInterleavedWithResults() {
        var buffer = makeBuffer()
        #expect(buffer.receive(0, at: 0) == ["F0"])
        #expect(render(buffer.skip(firstSeq: 1, count: 3, reason: "no_worker", at: 1)) ==
            ["D1:no_worker", "D2:no_worker", "D3:no_worker"])
        #expect(buffer.receive(4, at: 2) == ["F4"])
        // Skip arriving before the result preceding it.
        #expect(render(buffer.skip(firstSeq: 6, count: 2, reason: DropReason("no_worker"), at: 3)) == [])
        #expect(buffer.receive(8, at: 4) == [])
        #expect(buffer.receive(5, at: 5) == ["F5", "D6:no_worker", "D7:no_worker", "F8"])
        #expect(buffer.counters == StreamCounters(emitted: 9, processed: 4, dropped: 5, late: 0, duplicates: 0))
        // A result for a skipped frame is late (it was emitted as dropped).
        #expect(buffer.receive(6, at: 6) == [])
        #expect(buffer.counters.late == 1)
    }

    @Test func skipCountsAsLaterKnowledgeForTheTimeout() {
        var buffer = makeBuffer()
        _ = buffer.receive(0, at: 0)
        #expect(buffer.skip(firstSeq: 2, count: 1, reason: "no_worker", at: ms(7)).isEmpty)
        #expect(buffer.nextDeadline == ms(107))
        #expect(buffer.tick(at: ms(107) - 1).isEmpty)
        #expect(render(buffer.tick(at: ms(107))) == ["D1:timeout", "D2:no_worker"])
    }

    @Test func skipOverlappingABufferedResultDoesNotDoubleEmit() {
        var buffer = makeBuffer()
        _ = buffer.receive(0, at: 0)
        _ = buffer.receive(3, at: 1)
        _ = buffer.skip(firstSeq: 2, count: 3, reason: "no_worker", at: 2)  // 2, 3, 4; 3 has a result
        _ = buffer.skip(firstSeq: 4, count: 2, reason: "other", at: 3)  // 4 already skipped, 5 new
        #expect(buffer.receive(4, at: 4) == [])  // 4 is already known (skipped): duplicate
        #expect(buffer.counters.duplicates == 1)
        #expect(buffer.receive(1, at: 5) == ["F1", "D2:no_worker", "F3", "D4:no_worker", "D5:other"])
    }

    @Test func hugeSkipDoesNotCountAgainstMaxPending() {
        var buffer = makeBuffer(maxPending: 2)
        _ = buffer.receive(0, at: 0)
        _ = buffer.skip(firstSeq: 2, count: 1000, reason: "no_worker", at: 1)
        #expect(buffer.head == 1)  // no overflow: skipped frames are not buffered results
        let out = buffer.receive(1, at: 2)
        #expect(out.count == 1001)
        #expect(out.first == "F1")
        #expect(out.last == "D1001:no_worker")
    }

    // MARK: End

    @Test func endWithTrailingMissingFramesDropsThemAfterMaxDelayThenEndsOnce() {
        var buffer = makeBuffer()
        _ = buffer.receive(0, at: 0)
        _ = buffer.receive(1, at: ms(1))
        #expect(buffer.end(nextSeq: 4, at: ms(10)).isEmpty)
        #expect(buffer.endSeq == 4)
        #expect(buffer.nextDeadline == ms(110))
        #expect(buffer.tick(at: ms(110) - 1).isEmpty)
        let out = buffer.tick(at: ms(110))
        #expect(render(out) == ["D2:timeout", "D3:timeout", "E"])
        let expected = StreamCounters(emitted: 4, processed: 2, dropped: 2, late: 0, duplicates: 0)
        #expect(out.last == .end(expected, nextSeq: 4))
        #expect(buffer.isFinished)
        #expect(buffer.nextDeadline == nil)
        // Never again.
        #expect(buffer.tick(at: ms(500)).isEmpty)
        #expect(buffer.end(nextSeq: 4, at: ms(501)).isEmpty)
        #expect(buffer.flush(reason: "epoch").isEmpty)
        #expect(buffer.receive(3, at: ms(502)) == [])
        #expect(buffer.receive(1, at: ms(503)) == [])
        #expect(buffer.counters.late == 1)
        #expect(buffer.counters.duplicates == 1)
    }

    @Test func endArrivingWhenEverythingWasEmittedEndsAtOnce() {
        var buffer = makeBuffer()
        _ = buffer.receive(0, at: 0)
        _ = buffer.receive(1, at: 1)
        #expect(render(buffer.end(nextSeq: 2, at: 2)) == ["E"])
    }

    @Test func endBeforeLastResultsWaitsForThem() {
        var buffer = makeBuffer()
        _ = buffer.receive(0, at: 0)
        #expect(buffer.end(nextSeq: 3, at: ms(1)).isEmpty)
        #expect(buffer.receive(2, at: ms(2)) == [])
        #expect(buffer.receive(1, at: ms(3)) == ["F1", "F2", "E"])
    }

    @Test func resultsAtOrBeyondTheEndAreLate() {
        var buffer = makeBuffer()
        _ = buffer.receive(0, at: 0)
        _ = buffer.receive(5, at: 1)  // beyond the end that is about to come
        #expect(buffer.end(nextSeq: 2, at: 2).isEmpty)
        #expect(buffer.counters.late == 1)
        #expect(buffer.pendingCount == 0)
        #expect(buffer.receive(2, at: 3) == [])
        #expect(buffer.counters.late == 2)
        #expect(buffer.receive(1, at: 4) == ["F1", "E"])
    }

    @Test func emptyEpochEndsAtOnce() {
        var buffer = makeBuffer()
        #expect(render(buffer.end(nextSeq: 0, at: 0)) == ["E"])
        #expect(buffer.counters == StreamCounters())
    }

    // MARK: Overflow

    @Test func overflowDropsTheMissingHeadAtOnce() {
        var buffer = makeBuffer(maxPending: 2)
        _ = buffer.receive(0, at: 0)
        #expect(buffer.receive(2, at: 1) == [])
        #expect(buffer.receive(3, at: 2) == [])
        #expect(buffer.pendingCount == 2)
        // A third buffered result exceeds maxPending: 1 goes, 2, 3, 4 follow.
        #expect(buffer.receive(4, at: 3) == ["D1:overflow", "F2", "F3", "F4"])
        #expect(buffer.pendingCount == 0)
        #expect(buffer.counters == StreamCounters(emitted: 5, processed: 4, dropped: 1, late: 0, duplicates: 0))
    }

    @Test func overflowDropsOnlyUntilItFits() {
        var buffer = makeBuffer(maxPending: 2)
        _ = buffer.receive(0, at: 0)
        _ = buffer.receive(2, at: 1)
        _ = buffer.receive(4, at: 2)
        // 2, 4, 6 buffered > 2: drop 1, emit 2 (now 4, 6 buffered: fits); 3 is still awaited.
        #expect(buffer.receive(6, at: 3) == ["D1:overflow", "F2"])
        #expect(buffer.head == 3)
        #expect(buffer.pendingCount == 2)
        #expect(buffer.receive(3, at: 4) == ["F3", "F4"])
    }

    @Test func maxPendingZeroNeverWaitsWithAResultInHand() {
        var buffer = makeBuffer(maxPending: 0)
        _ = buffer.receive(0, at: 0)
        #expect(buffer.receive(3, at: 1) == ["D1:overflow", "D2:overflow", "F3"])
    }

    // MARK: Joining mid-stream / base

    @Test func midStreamJoinWithHello() {
        var buffer = makeBuffer()
        #expect(buffer.noteHello(nextSeq: 100, at: 0).isEmpty)
        #expect(buffer.isSettled)
        #expect(buffer.base == 100)
        #expect(buffer.receive(101, at: ms(1)) == [])
        #expect(buffer.receive(100, at: ms(2)) == ["F100", "F101"])
        // Before the collector joined: late.
        #expect(buffer.receive(99, at: ms(3)) == [])
        #expect(buffer.counters == StreamCounters(emitted: 2, processed: 2, dropped: 0, late: 1, duplicates: 0))
    }

    @Test func helloSettlesAtTheLowerOfHelloAndReceived() {
        var buffer = makeBuffer()
        #expect(buffer.noteHello(nextSeq: 100, at: 0).isEmpty)
        // Frames numbered before the hello may still be in flight: nothing was emitted yet,
        // so the base moves down to them.
        #expect(buffer.receive(98, at: ms(1)) == ["F98"])
        #expect(buffer.base == 98)
        #expect(buffer.receive(100, at: ms(2)) == [])
        #expect(render(buffer.tick(at: ms(102))) == ["D99:timeout", "F100"])
        // Now that emission started the base no longer moves.
        #expect(buffer.receive(97, at: ms(103)) == [])
        #expect(buffer.base == 98)
        #expect(buffer.counters.late == 1)
    }

    @Test func helloBelowBufferedResultsSettlesThereAndWaits() {
        var buffer = makeBuffer()
        #expect(buffer.receive(10, at: ms(0)) == [])
        #expect(!buffer.isSettled)
        #expect(buffer.noteHello(nextSeq: 8, at: ms(5)).isEmpty)
        #expect(buffer.base == 8)
        // 8 and 9 are missing; 10 arrived at 0 ms.
        #expect(buffer.nextDeadline == ms(100))
        #expect(buffer.receive(8, at: ms(6)) == ["F8"])
        #expect(render(buffer.tick(at: ms(100))) == ["D9:timeout", "F10"])
    }

    @Test func midStreamJoinWithoutHelloSettlesAfterMaxDelay() {
        var buffer = makeBuffer()
        #expect(buffer.receive(50, at: ms(0)) == [])
        #expect(buffer.receive(52, at: ms(5)) == [])
        #expect(buffer.receive(49, at: ms(10)) == [])
        #expect(!buffer.isSettled)
        #expect(buffer.base == 49)
        // Settling is measured from the first input.
        #expect(buffer.nextDeadline == ms(100))
        #expect(buffer.tick(at: ms(100) - 1).isEmpty)
        #expect(render(buffer.tick(at: ms(100))) == ["F49", "F50"])
        #expect(buffer.isSettled)
        // 51 missing since 52 arrived at 5 ms.
        #expect(buffer.nextDeadline == ms(105))
        #expect(buffer.receive(48, at: ms(101)) == [])
        #expect(buffer.counters.late == 1)
        #expect(buffer.receive(51, at: ms(102)) == ["F51", "F52"])
    }

    @Test func sequenceZeroSettlesAtOnceWithoutHello() {
        var buffer = makeBuffer()
        #expect(buffer.receive(1, at: 0) == [])
        #expect(!buffer.isSettled)
        #expect(buffer.receive(0, at: 1) == ["F0", "F1"])
        #expect(buffer.isSettled)
    }

    @Test func skipAloneCanSetTheBase() {
        var buffer = makeBuffer()
        #expect(buffer.skip(firstSeq: 7, count: 2, reason: "no_worker", at: 0).isEmpty)
        #expect(buffer.receive(9, at: ms(1)) == [])
        #expect(render(buffer.tick(at: ms(100))) == ["D7:no_worker", "D8:no_worker", "F9"])
    }

    @Test func helloAfterEmissionChangesNothing() {
        var buffer = makeBuffer()
        _ = buffer.receive(0, at: 0)
        #expect(buffer.noteHello(nextSeq: 50, at: 1).isEmpty)
        #expect(buffer.base == 0)
        #expect(buffer.receive(1, at: 2) == ["F1"])
    }

    @Test func endAloneWithoutHelloFinishesEmptyAfterMaxDelay() {
        var buffer = makeBuffer()
        #expect(buffer.end(nextSeq: 40, at: ms(0)).isEmpty)
        #expect(buffer.nextDeadline == ms(100))
        // Nothing of this epoch reached the collector: it emits no frames it never knew of.
        #expect(render(buffer.tick(at: ms(100))) == ["E"])
        #expect(buffer.counters.emitted == 0)
    }

    @Test func overflowSettlesAnUnsettledBase() {
        var buffer = makeBuffer(maxPending: 2)
        _ = buffer.receive(5, at: 0)
        _ = buffer.receive(7, at: 1)
        #expect(!buffer.isSettled)
        // 5, 7, 8 buffered > 2: the base settles at 5, which is emitted; then 7, 8 fit.
        #expect(buffer.receive(8, at: 2) == ["F5"])
        #expect(buffer.isSettled)
        #expect(buffer.receive(9, at: 3) == ["D6:overflow", "F7", "F8", "F9"])
    }

    // MARK: nextDeadline

    @Test func nextDeadlineIsExactlyWhenTickEmits() {
        var buffer = makeBuffer()
        #expect(buffer.nextDeadline == nil)
        _ = buffer.noteHello(nextSeq: 0, at: 0)
        #expect(buffer.nextDeadline == nil)
        _ = buffer.receive(1, at: ms(3))
        _ = buffer.receive(3, at: ms(4))
        #expect(buffer.nextDeadline == ms(103))
        // Ticking earlier changes nothing; the deadline stays.
        #expect(buffer.tick(at: ms(50)).isEmpty)
        #expect(buffer.nextDeadline == ms(103))
        #expect(render(buffer.tick(at: ms(103))) == ["D0:timeout", "F1"])
        #expect(buffer.nextDeadline == ms(104))
        _ = buffer.end(nextSeq: 5, at: ms(103))
        #expect(buffer.nextDeadline == ms(104))  // 3 arrived before the end
        #expect(render(buffer.tick(at: ms(104))) == ["D2:timeout", "F3"])
        #expect(buffer.nextDeadline == ms(203))  // the end's arrival
        #expect(render(buffer.tick(at: ms(203))) == ["D4:timeout", "E"])
        #expect(buffer.nextDeadline == nil)
    }

    @Test func nextDeadlineSaturatesInsteadOfOverflowing() {
        var buffer = Buffer(maxDelayNanoseconds: .max, maxPending: 8)
        _ = buffer.receive(0, at: 10)
        _ = buffer.receive(2, at: 20)
        #expect(buffer.nextDeadline == .max)
        #expect(buffer.tick(at: .max - 1).isEmpty)
    }

    // MARK: Flush

    @Test func flushEmitsEverythingPendingInOrderThenEnds() {
        var buffer = makeBuffer()
        _ = buffer.receive(0, at: 0)
        _ = buffer.receive(2, at: 1)
        _ = buffer.skip(firstSeq: 4, count: 1, reason: "no_worker", at: 2)
        _ = buffer.receive(6, at: 3)
        let out = buffer.flush(reason: "epoch_replaced")
        #expect(render(out) == [
            "D1:epoch_replaced", "F2", "D3:epoch_replaced", "D4:no_worker", "D5:epoch_replaced", "F6", "E",
        ])
        #expect(out.last == .end(StreamCounters(emitted: 7, processed: 3, dropped: 4, late: 0, duplicates: 0), nextSeq: 7))
        #expect(buffer.isFinished)
        #expect(buffer.flush(reason: "again").isEmpty)
        #expect(buffer.receive(7, at: 4) == [])
        #expect(buffer.counters.late == 1)
    }

    @Test func flushAfterEndDropsUpToTheEnd() {
        var buffer = makeBuffer()
        _ = buffer.receive(0, at: 0)
        _ = buffer.end(nextSeq: 3, at: 1)
        #expect(render(buffer.flush(reason: "closing")) == ["D1:closing", "D2:closing", "E"])
    }

    @Test func flushOfAnUnsettledBufferStartsAtTheLowestReceived() {
        var buffer = makeBuffer()
        _ = buffer.receive(12, at: 0)
        _ = buffer.receive(10, at: 1)
        #expect(render(buffer.flush(reason: "closing")) == ["F10", "D11:closing", "F12", "E"])
    }

    @Test func flushOfAnEmptyBufferOnlyEnds() {
        var buffer = makeBuffer()
        #expect(render(buffer.flush(reason: "closing")) == ["E"])
    }

    // MARK: Misc

    @Test func durationInitializerConvertsToNanoseconds() {
        #expect(Buffer(maxDelay: .milliseconds(250), maxPending: 1).maxDelay == 250_000_000)
        #expect(Buffer(maxDelay: .seconds(2), maxPending: 1).maxDelay == 2_000_000_000)
        #expect(Buffer(maxDelay: .nanoseconds(7), maxPending: 1).maxDelay == 7)
        #expect(Buffer(maxDelay: .milliseconds(-5), maxPending: 1).maxDelay == 0)
    }

    @Test func droppedHistoryPruningStillCountsOldResults() {
        // Many separate drop runs push the history past its limit; old results still count.
        var buffer = makeBuffer(maxPending: 0)
        var now: UInt64 = 0
        _ = buffer.receive(0, at: now)
        for seq in stride(from: UInt64(2), through: 4000, by: 2) {
            now += 1
            #expect(buffer.receive(seq, at: now) == ["D\(seq - 1):overflow", "F\(seq)"])
        }
        let before = buffer.counters
        _ = buffer.receive(1, at: now + 1)  // dropped long ago
        _ = buffer.receive(3999, at: now + 2)  // dropped recently
        _ = buffer.receive(4000, at: now + 3)  // processed recently
        #expect(buffer.counters.late == before.late + 2)
        #expect(buffer.counters.duplicates == before.duplicates + 1)
        #expect(buffer.counters.emitted == 4001)
    }

    @Test func highestKnownSeqFollowsAcceptedInputs() {
        var buffer = makeBuffer()
        #expect(buffer.highestKnownSeq == nil)
        _ = buffer.noteHello(nextSeq: 0, at: 0)
        #expect(buffer.highestKnownSeq == nil)
        _ = buffer.receive(0, at: 1)
        _ = buffer.receive(3, at: 2)
        #expect(buffer.highestKnownSeq == 3)
        _ = buffer.skip(firstSeq: 4, count: 3, reason: "no_worker", at: 3)
        #expect(buffer.highestKnownSeq == 6)
        _ = buffer.receive(2, at: 4)
        #expect(buffer.highestKnownSeq == 6)
        // Closing an epoch whose end never came.
        _ = buffer.end(nextSeq: buffer.highestKnownSeq! + 1, at: ms(1))
        #expect(render(buffer.tick(at: ms(101))) == ["D1:timeout", "F2", "F3", "D4:no_worker", "D5:no_worker", "D6:no_worker", "E"])
    }

    @Test func dropReasonIsAWireString() {
        #expect(DropReason.timeout.rawValue == "timeout")
        #expect(DropReason.overflow.rawValue == "overflow")
        #expect(DropReason("no_worker") == DropReason(rawValue: "no_worker"))
        #expect(Emission.dropped(seqs: 1..<2, reason: .timeout).seq == 1)
        #expect(Emission.dropped(seqs: 5..<UInt64.max, reason: .timeout).sequenceCount == UInt64.max - 5)
        #expect(Emission.end(StreamCounters(), nextSeq: 9).seq == nil)
    }
}
