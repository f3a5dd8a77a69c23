import FacewireProtocol
import FacewireTail
import Testing

@Suite("GapDetector (frames a subscriber never received)")
struct GapDetectorTests {
    /// How many sequences `observe` reported missing.
    static func missing(_ gaps: inout GapDetector, _ seq: UInt64, stream: String = "a", epoch: UInt64 = 1, run: UInt64 = 1) -> UInt64 {
        let seen = gaps.observe(stream: stream, epoch: epoch, seq: seq, runLength: run)
        return seen.missing.upperBound - seen.missing.lowerBound
    }

    @Test func consecutiveFramesAreNoGap() {
        var gaps = GapDetector()
        for seq in UInt64(0)..<50 {
            #expect(gaps.observe(stream: "a", epoch: 1, seq: seq) == .init(missing: seq..<seq, cause: .missed, fresh: seq..<seq + 1))
        }
        #expect(gaps.missed == 0)
    }

    @Test func joiningMidStreamIsNoGap() {
        var gaps = GapDetector()
        #expect(Self.missing(&gaps, 1000) == 0)
        #expect(Self.missing(&gaps, 1001) == 0)
    }

    @Test func aJumpNamesTheMissingFramesPerStreamAndEpoch() {
        var gaps = GapDetector()
        _ = Self.missing(&gaps, 0)
        _ = Self.missing(&gaps, 0, stream: "b")
        let jump = gaps.observe(stream: "a", epoch: 1, seq: 5)
        #expect(jump.missing == 1..<5 && jump.cause == .missed && jump.fresh == 5..<6)
        #expect(Self.missing(&gaps, 1, stream: "b") == 0, "streams are independent")
        #expect(Self.missing(&gaps, 0, epoch: 2) == 0, "a new epoch starts afresh")
        #expect(Self.missing(&gaps, 7) == 1)
        #expect(gaps.missed == 5)
        // A repeated or older sequence (which the collector never sends) is not a gap, has a line already, and does
        // not move the mark back.
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 3).fresh.isEmpty)
        #expect(Self.missing(&gaps, 8) == 0)
    }

    @Test func anEndedEpochIsForgotten() {
        var gaps = GapDetector()
        _ = Self.missing(&gaps, 0)
        _ = gaps.finish(stream: "a", epoch: 1)
        #expect(Self.missing(&gaps, 9) == 0)
        #expect(gaps.missed == 0)
    }

    @Test func theEndsNextSeqNamesTheFramesMissingAtTheEnd() {
        var gaps = GapDetector()
        _ = Self.missing(&gaps, 0)
        _ = Self.missing(&gaps, 1)
        let end = gaps.finish(stream: "a", epoch: 1, nextSeq: 6)
        #expect(end.missing == 2..<6 && end.cause == .missed)
        #expect(gaps.missed == 4)
        // A summary without next_seq (an older collector), or one at or below the mark, names nothing.
        _ = Self.missing(&gaps, 0, stream: "b")
        #expect(gaps.finish(stream: "b", epoch: 1).missing.isEmpty)
        _ = Self.missing(&gaps, 0, stream: "c", run: 10)
        #expect(gaps.finish(stream: "c", epoch: 1, nextSeq: 4).missing.isEmpty)
        // A pair never followed (the subscriber joined at its end) names nothing either, however far the end.
        #expect(gaps.finish(stream: "d", epoch: 1, nextSeq: .max).missing.isEmpty)
        // After a takeover without the state, the frames up to the end are the failover's.
        _ = Self.missing(&gaps, 0, stream: "e")
        gaps.noteTakeover(stream: "e", epoch: 1)
        let lost = gaps.finish(stream: "e", epoch: 1, nextSeq: .max)
        #expect(lost.missing == 1..<UInt64.max && lost.cause == .failover)
        #expect(gaps.missed == .max, "saturates")
    }

    @Test func aDroppedRunIsNoGapAndMovesTheMark() {
        var gaps = GapDetector()
        #expect(Self.missing(&gaps, 0) == 0)
        #expect(Self.missing(&gaps, 1, run: 1 << 40) == 0)
        #expect(Self.missing(&gaps, 1 + (1 << 40)) == 0, "the run stood for every sequence before it")
        #expect(Self.missing(&gaps, 5 + (1 << 40)) == 3)
        // A run to the very end saturates instead of trapping; nothing is fresh after it.
        #expect(Self.missing(&gaps, 10 + (1 << 40), run: .max) == 4)
        #expect(gaps.observe(stream: "a", epoch: 1, seq: .max).fresh.isEmpty)
        #expect(gaps.missed == 7)
    }

    @Test func absurdJumpsNeitherTrapNorCostMoreThanOne() {
        var gaps = GapDetector()
        _ = Self.missing(&gaps, 0)
        #expect(Self.missing(&gaps, UInt64(Int64.max) + 10) == UInt64(Int64.max) + 9, "more than Int.max missing")
        _ = Self.missing(&gaps, 0, stream: "b")
        #expect(Self.missing(&gaps, .max - 1, stream: "b") == UInt64.max - 2)
        #expect(gaps.missed == .max, "the total saturates")
    }

    @Test func theJumpRightAfterATakeoverIsAFailoverGap() {
        var gaps = GapDetector()
        _ = Self.missing(&gaps, 0)
        _ = Self.missing(&gaps, 1)
        gaps.noteTakeover(stream: "a", epoch: 1)
        gaps.noteTakeover(stream: "never-seen", epoch: 1)  // nothing to lose: no mark is made
        let jump = gaps.observe(stream: "a", epoch: 1, seq: 12)
        #expect(jump.missing == 2..<12 && jump.cause == .failover)
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 20).cause == .missed, "only the jump right after the takeover")
        // A takeover with no jump leaves no failover mark behind for a later, ordinary one.
        gaps.noteTakeover(stream: "a", epoch: 1)
        #expect(Self.missing(&gaps, 21) == 0)
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 30).cause == .missed)
        #expect(Self.missing(&gaps, 40, stream: "never-seen") == 0)
    }

    @Test func whatATakeoverPublishesAgainHasALineAlready() {
        var gaps = GapDetector()
        _ = Self.missing(&gaps, 0)
        _ = Self.missing(&gaps, 1, run: 9)  // 1..<10
        gaps.noteTakeover(stream: "a", epoch: 1)
        #expect(gaps.observe(stream: "a", epoch: 1, seq: 4).fresh.isEmpty, "inside the run already printed")
        // A run reaching past the mark: only its new part is fresh.
        let run = gaps.observe(stream: "a", epoch: 1, seq: 8, runLength: 6)
        #expect(run.missing.isEmpty && run.fresh == 10..<14)
        #expect(Self.missing(&gaps, 14) == 0)
    }

    @Test func theNumberOfStreamsRememberedIsBounded() {
        var gaps = GapDetector(maxStreams: 8)
        for stream in 0..<8 { _ = Self.missing(&gaps, 0, stream: "s\(stream)") }
        _ = Self.missing(&gaps, 1, stream: "s7")  // the most recently seen
        for stream in 8..<100 { _ = Self.missing(&gaps, 0, stream: "s\(stream)") }
        // Forgotten pairs start afresh (no gap); the most recent ones are still followed.
        #expect(Self.missing(&gaps, 50, stream: "s0") == 0)
        #expect(Self.missing(&gaps, 5, stream: "s99") == 4)
    }

    @Test func theLinesOfAGapAreDroppedFramesOfTheStreamAndOneRunBeyondTheCap() {
        var message = StreamMessage()
        message.version = 1
        message.stream = "cam"
        message.epoch = 7
        message.publication = 3
        message.leaderEpoch = 9
        let short = TailClient.droppedLines(like: message, seqs: 10..<13, reason: "failover")
        #expect(short.map(\.frame.seq) == [10, 11, 12])
        #expect(short.allSatisfy {
            $0.stream == "cam" && $0.epoch == 7 && $0.publication == 0 && $0.leaderEpoch == 9 && $0.frame.stream == "cam"
                && $0.frame.epoch == 7 && $0.frame.status == .dropped && $0.frame.reason == "failover" && $0.frame.runLength == 0
                && $0.frame.worker.isEmpty && $0.frame.faces.isEmpty
        })
        let cap = TailClient.maxGapLines
        #expect(TailClient.droppedLines(like: message, seqs: 0..<cap, reason: "missed").count == Int(cap))
        let long = TailClient.droppedLines(like: message, seqs: 5..<(UInt64.max - 1), reason: "missed")
        #expect(long.count == 1 && long[0].frame.seq == 5 && long[0].frame.runLength == .max - 6)
    }
}
