import FacewireProtocol
import Testing
@testable import FacewireBench

/// What the load generator reads back from the results stream is a network value: counting it must not trap, and
/// the flow gate must open and close on those counts.
@Suite("Collector load accounting")
struct LoadAccountingTests {
    static func frame(seq: UInt64, runLength: UInt64 = 0) throws -> [[UInt8]] {
        var result = FrameResult()
        result.stream = "cam"
        result.seq = seq
        result.runLength = runLength
        return try StreamMessage(stream: "cam", epoch: 1, body: .frame(result)).parts()
    }

    @Test("frames count by run length, summaries as ends; heartbeats and garbage count nothing; a hostile run saturates")
    func publishedCounter() throws {
        var counter = PublishedCounter()
        counter.take(try Self.frame(seq: 0), at: 10)
        counter.take(try Self.frame(seq: 1, runLength: 5), at: 20)
        counter.take(try StreamMessage(stream: "", epoch: 0, body: nil).parts(), at: 30)
        counter.take([[0x63, 0x00], [0xFF, 0xFF, 0xFF]], at: 40)
        counter.take([[0x63, 0x00]], at: 50)
        counter.take(try StreamMessage(stream: "cam", epoch: 1, body: .end(StreamSummary())).parts(), at: 60)
        #expect(counter.frames == 6 && counter.ends == 1)
        #expect(counter.firstFrame == 10 && counter.lastFrame == 20)
        counter.take(try Self.frame(seq: 7, runLength: .max), at: 70)
        counter.take(try Self.frame(seq: 8, runLength: .max), at: 80)
        #expect(counter.frames == .max)
    }

    @Test("the gate books sends while fewer than the limit are unpublished, and never traps on a hostile count")
    func flowGate() {
        let gate = FlowGate()
        #expect(gate.book(16, limit: 32))
        #expect(gate.book(16, limit: 32))
        #expect(!gate.book(16, limit: 32))
        gate.noteWait()
        gate.published(16)
        #expect(gate.book(16, limit: 32))
        gate.published(.max)
        #expect(gate.book(16, limit: 32))
        #expect(gate.waitedFraction == 1.0 / 4)
    }
}
