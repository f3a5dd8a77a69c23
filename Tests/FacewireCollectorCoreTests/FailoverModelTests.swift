import FacewireFuzzing
import FacewireProtocol
import Testing
@testable import FacewireCollectorCore

/// A failover as a model (SPEC.md 18): an active core with its ``ReplicationSender``, a standby's ``ReplicaState``,
/// links between them that delay messages, the active killed at a random step with messages in flight, the standby
/// taking over, and a tail that keeps each message once by its publication number. Over many seeds: every sequence of
/// every stream is on the tail exactly once and in order, processed or dropped with a reason; publication numbers have
/// no gap; no face is announced twice or left twice; each stream's summary counts all its frames.
@Suite("Failover model")
struct FailoverModelTests {
    static let ms: UInt64 = 1_000_000

    struct Tail {
        var last: [String: UInt64] = [:]
        var kept: [StreamMessage] = []
        var repeats = 0
        var gaps = 0

        mutating func receive(_ message: StreamMessage) {
            let number = last[message.stream] ?? 0
            guard message.publication > number else {
                repeats += 1
                return
            }
            if message.publication != number + 1 { gaps += 1 }
            last[message.stream] = message.publication
            kept.append(message)
        }
    }

    /// What one run went through (to check that the runs cover the cases).
    struct Figures {
        var republished = 0
        var repeats = 0
        var failoverDrops = 0
        var heldAtCrash = 0
    }

    /// One run: `frames` per stream, the active killed after `crashAt` inputs.
    @discardableResult
    static func run(seed: UInt64) throws -> Figures {
        var figures = Figures()
        var random = SplitMix64(seed: seed)
        let streams = ["a", "b"]
        let frames: UInt64 = 60
        // The inputs, stream by stream interleaved: a hello, then results slightly out of order, some lost.
        var inputs: [Envelope.OneOf_Body] = streams.map { CoreHarness.hello($0) }
        for seq in UInt64(0)..<frames {
            for (index, stream) in streams.enumerated() {
                guard Int.random(in: 0..<20, using: &random) != 0 else { continue }  // 5 % lost at a worker
                let x = 100 + Float(seq) * 2 + Float(index) * 300
                inputs.append(FailoverTests.result(stream, seq: seq, faces: seq % 30 < 18 ? [x] : []))
            }
        }
        inputs.swapAt(10, 11)
        let ending = streams.map { CoreHarness.end($0, nextSeq: frames) }
        let crashAt = Int.random(in: 8..<(inputs.count - 4), using: &random)

        var a = CoreHarness()
        a.core.startReplicating(leaderEpoch: 10)
        var sender = ReplicationSender(leaderEpoch: 10)
        var replica = ReplicaState(settings: .init(maxOpen: 16, maxEnded: 64), tracking: a.core.tracking)
        var toStandby: [(due: UInt64, bytes: [UInt8])] = []
        var toActive: [(due: UInt64, ack: ReplicationAck)] = []
        var tail = Tail()
        let standby: [UInt8] = [7]

        func deliver(upTo now: UInt64, everything: Bool = false) throws {
            while let first = toStandby.first, everything || first.due <= now {
                toStandby.removeFirst()
                let message = try Replication(serializedBytes: first.bytes)
                for case .ack(let epoch, let number) in replica.receive(message, at: now).actions {
                    var ack = ReplicationAck()
                    ack.leaderEpoch = epoch
                    ack.number = number
                    toActive.append((now + UInt64.random(in: 0...3, using: &random) * ms, ack))
                }
            }
        }
        func carryOut(_ out: ReplicationSender.Output, _ now: UInt64) throws {
            for action in out.actions {
                switch action {
                case .send(_, let message):
                    toStandby.append((now + UInt64.random(in: 0...3, using: &random) * ms, try message.serializedBytes()))
                case .publish(let list):
                    for publication in list { tail.receive(try StreamMessage(serializedBytes: publication.bytes)) }
                }
            }
        }
        func step(_ output: CollectorOutput) throws {
            let publications = try output.publish.map { ReplicationSender.Publication(message: $0, bytes: try $0.serializedBytes()) }
            try carryOut(sender.step(checkpoints: a.core.takeCheckpoints(), publications: publications, at: a.now), a.now)
        }

        // The standby joins before the first input and is attached within a few milliseconds.
        for case .ack(let epoch, let number) in replica.tick(at: a.now).actions {
            var ack = ReplicationAck()
            ack.leaderEpoch = epoch
            ack.number = number
            toActive.append((a.now, ack))
        }
        for (index, input) in inputs.enumerated() where index < crashAt {
            a.advance(ms: 5)
            try step(a.send(input))
            try step(a.tick())
            try deliver(upTo: a.now)
            while let first = toActive.first, first.due <= a.now {
                toActive.removeFirst()
                try carryOut(sender.acknowledged(first.ack, from: standby, at: a.now) { a.core.snapshot() }, a.now)
            }
            try carryOut(sender.tick(at: a.now), a.now)
        }
        figures.heldAtCrash = sender.figures.heldSteps
        // The active dies: some of what it sent the standby still arrives, the rest is lost with it.
        let survivors = Int.random(in: 0...toStandby.count, using: &random)
        toStandby = Array(toStandby.prefix(survivors))
        try deliver(upTo: a.now, everything: true)
        #expect(replica.isCurrent, "seed \(seed): the standby was attached")

        // The standby takes over: its state, then the publications not known to have gone out, then new inputs (a few
        // of the dead active's last inputs were lost with it).
        var b = CoreHarness()
        b.now = a.now + 1500 * ms
        b.wall = a.wall + 1_500_000
        b.core.startReplicating(leaderEpoch: 11)
        b.core.restore(replica.resumes, closed: replica.closedKeys, at: b.instant)
        figures.republished = replica.replayPublications.count
        for bytes in replica.replayPublications { tail.receive(try StreamMessage(serializedBytes: bytes)) }
        let lost = Int.random(in: 0...3, using: &random)
        for stream in streams { b.send(CoreHarness.hello(stream, nextSeq: frames)) }
        for input in inputs[min(inputs.count, crashAt + lost)...] + ending {
            b.advance(ms: 5)
            b.send(input)
            b.tick()
        }
        b.advance(ms: 1000)
        b.tick()
        for message in b.published { tail.receive(message) }

        #expect(tail.gaps == 0, "seed \(seed): publication numbers without a gap")
        figures.repeats = tail.repeats
        for stream in streams {
            let messages = tail.kept.filter { $0.stream == stream }
            let frameLines = messages.compactMap { if case .frame(let frame)? = $0.body { frame } else { nil } }
            let (ordered, covered) = checkOrdered(frameLines)
            #expect(ordered && covered == frames, "seed \(seed) \(stream): every sequence once, in order (\(covered) of \(frames))")
            #expect(frameLines.allSatisfy { $0.status == .processed || !$0.reason.isEmpty }, "seed \(seed): every drop has a reason")
            figures.failoverDrops += frameLines.filter { $0.reason == "failover" }.count
            var appeared: [UInt64] = []
            var left: [UInt64] = []
            for case .event(let event)? in messages.map(\.body) {
                if event.kind == .appeared { appeared.append(event.trackingID) } else { left.append(event.trackingID) }
            }
            #expect(Set(appeared).count == appeared.count, "seed \(seed) \(stream): no face announced twice")
            #expect(Set(left).count == left.count && Set(left) == Set(appeared), "seed \(seed) \(stream): each face left once")
            var summaries: [StreamSummary] = []
            for case .end(let summary)? in messages.map(\.body) { summaries.append(summary) }
            #expect(summaries.count == 1 && summaries.first?.frames == frames, "seed \(seed) \(stream): one summary of all frames")
        }
        return figures
    }

    @Test("a failover at a random step keeps every stream whole", arguments: UInt64(0)..<40)
    func failoverKeepsStreamsWhole(seed: UInt64) throws {
        try Self.run(seed: seed)
    }

    @Test("the runs cover a crash with steps held, publications republished and repeated, and frames lost to the handover")
    func theRunsCoverTheCases() throws {
        let all = try (UInt64(0)..<40).map { try Self.run(seed: $0) }
        #expect(all.contains { $0.heldAtCrash > 0 })
        #expect(all.contains { $0.republished > 0 })
        #expect(all.contains { $0.repeats > 0 }, "a republished message the tail had already")
        #expect(all.contains { $0.failoverDrops > 0 })
    }
}
