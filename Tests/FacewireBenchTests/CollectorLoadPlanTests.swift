import FacewireCollectorCore
import FacewireProtocol
import Testing
@testable import FacewireBench

/// The load generator must measure the collector doing its real work: every message it sends is valid, every result
/// is taken, published in order as processed, and its faces are tracked. Checked by feeding the plan's messages to
/// the collector's core, with the threads' batches interleaved as the ROUTER's fair queueing would.
@Suite("Collector load plan")
struct CollectorLoadPlanTests {
    static let wall: Int64 = 1_764_000_000_000_000

    @Test("every planned result is taken, published in order as processed, with tracked faces", arguments: [(1, 1), (3, 4), (10, 16)])
    func resultsArePublishedAndTracked(streams: Int, threads: Int) throws {
        let plan = try CollectorLoadPlan(streams: streams, threads: threads, framesPerStream: 40, faces: 2, epoch: 7, startUs: Self.wall)
        var core = CollectorCore(limits: CollectorLimits(statisticsInterval: 0))
        var now = CollectorCore.Instant(monotonicNs: 1_000_000_000, wallUs: Self.wall)
        var published: [StreamMessage] = []
        var counters: [String: UInt64] = [:]
        func take(_ envelope: Envelope, from identity: UInt8) {
            let out = core.handle(envelope, from: [identity], peerAddress: "127.0.0.1", at: now)
            published += out.publish
            for count in out.counts { counters[count.name, default: 0] += count.amount }
            now.monotonicNs += 100_000
        }
        for index in 0..<streams { take(plan.hello(stream: index), from: 0) }
        var batches = try (0..<threads).map { try plan.encodedResults(thread: $0)[...] }
        while batches.contains(where: { !$0.isEmpty }) {
            for thread in batches.indices {
                guard let bytes = batches[thread].popFirst() else { continue }
                take(try Envelope(part: bytes), from: UInt8(thread + 1))
            }
        }
        for index in 0..<streams { take(plan.end(stream: index), from: 0) }

        #expect(counters["results"] == plan.totalResults)
        #expect(counters.keys.filter { $0.hasPrefix("results_") }.isEmpty, "nothing rejected, late or duplicate: \(counters)")
        for index in 0..<streams {
            let stream = plan.streamID(index)
            let frames = published.compactMap { message -> FrameResult? in
                guard message.stream == stream, case .frame(let frame) = message.body else { return nil }
                return frame
            }
            #expect(frames.map(\.seq) == Array(0..<40), "\(stream) in order and complete")
            #expect(frames.allSatisfy { $0.status == .processed && $0.faces.count == 2 })
            #expect(frames.dropFirst().allSatisfy { $0.faces.allSatisfy { $0.trackingID != 0 } }, "\(stream): faces tracked")
            let trackIDs = Set(frames.flatMap { $0.faces.map(\.trackingID) })
            #expect(trackIDs.count == 2, "\(stream): the two drifting faces keep their tracks: \(trackIDs)")
            let ends = published.filter { $0.stream == stream && { if case .end = $0.body { true } else { false } }($0) }
            #expect(ends.count == 1, "\(stream) ended once")
        }
    }

    @Test("each thread sends every threads-th sequence of every stream, and the threads together send each once")
    func threadsShareTheSequences() throws {
        let plan = try CollectorLoadPlan(streams: 2, threads: 3, framesPerStream: 10, faces: 0, epoch: 1, startUs: 0)
        #expect(Array(plan.sequences(forThread: 1)) == [1, 4, 7])
        let all = (0..<3).flatMap { Array(plan.sequences(forThread: $0)) }.sorted()
        #expect(all == Array(0..<10))
        #expect(try plan.encodedResults(thread: 0).count == 4 * 2)
        #expect(plan.streamID(1) == "load-00001")
        #expect(CollectorLoadPlan.defaultStreamID(7) == "load-00007" && Wire.isValidStreamID(CollectorLoadPlan.defaultStreamID(9999)))
    }

    @Test("a shard's plan plays the first streams that shard owns: the shards' plans together are distinct streams")
    func shardsPlayTheirOwnStreams() throws {
        var all: [String] = []
        for k in 0..<4 {
            let shard = try ShardIdentity(index: k, count: 4)
            let plan = try CollectorLoadPlan(streams: 50, threads: 2, framesPerStream: 1, faces: 0, epoch: 1, startUs: 0, shard: shard)
            #expect(plan.streamIDs.count == 50 && plan.streamIDs.allSatisfy(shard.owns))
            all += plan.streamIDs
        }
        #expect(Set(all).count == 200)
    }

    @Test("out-of-bounds plans are refused")
    func boundsAreChecked() {
        #expect(throws: CollectorLoadPlan.InvalidPlan.self) {
            try CollectorLoadPlan(streams: 0, threads: 1, framesPerStream: 1, faces: 0, epoch: 1, startUs: 0)
        }
        #expect(throws: CollectorLoadPlan.InvalidPlan.self) {
            try CollectorLoadPlan(streams: 1, threads: 65, framesPerStream: 1, faces: 0, epoch: 1, startUs: 0)
        }
        #expect(throws: CollectorLoadPlan.InvalidPlan.self) {
            try CollectorLoadPlan(streams: 10_000, threads: 1, framesPerStream: .max, faces: 0, epoch: 1, startUs: 0)
        }
        #expect(throws: CollectorLoadPlan.InvalidPlan.self) {
            try CollectorLoadPlan(streams: 1, threads: 1, framesPerStream: 1, faces: 9, epoch: 1, startUs: 0)
        }
    }
}
