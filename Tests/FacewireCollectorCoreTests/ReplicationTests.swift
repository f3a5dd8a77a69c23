import FacewireProtocol
import FacewireFuzzing
import FacewireTracking
import Foundation
import Testing
@testable import FacewireCollectorCore

/// The active's ``ReplicationSender`` and the standby's ``ReplicaState`` (SPEC.md 18), by hand and as a model of a
/// failover: an active and its standby linked by message queues, the active killed at a random step, the standby
/// taking over, and a tail that keeps each message once by its publication number.
@Suite("Replication")
struct ReplicationTests {
    static let ms: UInt64 = 1_000_000

    static func publication(_ stream: String, _ number: UInt64) -> ReplicationSender.Publication {
        var message = StreamMessage(stream: stream, epoch: 1, body: .event(FaceEvent()))
        message.publication = number
        return .init(message: message, bytes: (try? message.serializedBytes()) ?? [])
    }

    static func ack(_ number: UInt64, epoch: UInt64 = 5) -> ReplicationAck {
        var ack = ReplicationAck()
        ack.leaderEpoch = epoch
        ack.number = number
        ack.nodeID = "standby"
        return ack
    }

    static func published(_ out: ReplicationSender.Output) -> [UInt64] {
        out.actions.flatMap { action -> [UInt64] in
            if case .publish(let list) = action { return list.map(\.message.publication) }
            return []
        }
    }

    static func sent(_ out: ReplicationSender.Output) -> [Replication] {
        out.actions.compactMap { if case .send(_, let message) = $0 { message } else { nil } }
    }

    // MARK: The sender

    @Test("with no standby every step is published at once")
    func noStandbyPublishesAtOnce() {
        var sender = ReplicationSender(leaderEpoch: 5)
        let out = sender.step(checkpoints: [], publications: [Self.publication("cam", 1)], at: 0)
        #expect(Self.published(out) == [1] && Self.sent(out).isEmpty && sender.publishedThrough == 1)
    }

    @Test("an attached standby holds publications back until it acknowledges them; a slow one is detached")
    func anAttachedStandbyHoldsPublications() {
        var sender = ReplicationSender(leaderEpoch: 5)
        let identity: [UInt8] = [9]
        var out = sender.step(checkpoints: [], publications: [Self.publication("cam", 1)], at: 0)
        #expect(Self.published(out) == [1])
        // It joins: a snapshot at step 1. Attaching, it holds nothing back.
        out = sender.acknowledged(Self.ack(0), from: identity, at: 1 * Self.ms) { [StreamCheckpoint()] }
        let snapshot = Self.sent(out)
        #expect(snapshot.count == 1 && snapshot[0].snapshot && snapshot[0].number == 1 && snapshot[0].checkpoints.count == 1)
        out = sender.step(checkpoints: [], publications: [Self.publication("cam", 2)], at: 2 * Self.ms)
        #expect(Self.published(out) == [2] && Self.sent(out).first?.number == 2)
        out = sender.acknowledged(Self.ack(1), from: identity, at: 3 * Self.ms) { [] }
        #expect(sender.figures.attached == 1 && out.total("replication_standbys_attached") == 1)
        // Attached: step 3 waits for its acknowledgement.
        out = sender.step(checkpoints: [], publications: [Self.publication("cam", 3)], at: 4 * Self.ms)
        #expect(Self.published(out).isEmpty && sender.figures.heldSteps == 1)
        out = sender.acknowledged(Self.ack(3), from: identity, at: 5 * Self.ms) { [] }
        #expect(Self.published(out) == [3] && sender.publishedThrough == 3)
        // An acknowledgement of a step not sent is refused.
        out = sender.acknowledged(Self.ack(99), from: identity, at: 6 * Self.ms) { [] }
        #expect(out.total("replication_ack_refused_number") == 1)
        // Step 4 is never acknowledged: after the timeout the standby is detached and the step goes out.
        out = sender.step(checkpoints: [], publications: [Self.publication("cam", 4)], at: 10 * Self.ms)
        #expect(Self.published(out).isEmpty)
        out = sender.tick(at: 10 * Self.ms + sender.settings.ackTimeout - 1)
        #expect(Self.published(out).isEmpty)
        out = sender.tick(at: 10 * Self.ms + sender.settings.ackTimeout)
        #expect(Self.published(out) == [4] && out.total("replication_standbys_detached") == 1 && sender.figures.attached == 0)
        // It asks again: a new snapshot.
        out = sender.acknowledged(Self.ack(3), from: identity, at: 600 * Self.ms) { [] }
        #expect(Self.sent(out).first?.snapshot == true)
    }

    @Test("a snapshot carries the publications still held, so a standby joining late can republish them")
    func aSnapshotCarriesHeldPublications() {
        var sender = ReplicationSender(leaderEpoch: 5)
        _ = sender.acknowledged(Self.ack(0), from: [1], at: 0) { [] }
        _ = sender.acknowledged(Self.ack(1), from: [1], at: 0) { [] }
        _ = sender.step(checkpoints: [], publications: [Self.publication("cam", 1), Self.publication("cam", 2)], at: 1)
        let out = sender.acknowledged(Self.ack(0), from: [2], at: 2) { [] }
        #expect(Self.sent(out).first?.publications.count == 2)
    }

    @Test("the most standbys are bounded")
    func standbysAreBounded() {
        var sender = ReplicationSender(leaderEpoch: 5, settings: .init(maxStandbys: 2))
        for id in UInt8(0)..<5 { _ = sender.acknowledged(Self.ack(0), from: [id], at: 0) { [] } }
        #expect(sender.figures.attaching == 2)
    }

    // MARK: The replica

    static func replication(_ number: UInt64, epoch: UInt64 = 5, snapshot: Bool = false, through: UInt64 = 0, streams: [String] = [])
        -> Replication
    {
        var message = Replication()
        message.leaderEpoch = epoch
        message.number = number
        message.snapshot = snapshot
        message.publishedThrough = through
        message.checkpoints = streams.map {
            var checkpoint = StreamCheckpoint()
            checkpoint.stream = $0
            checkpoint.epoch = 1
            checkpoint.nextTrackID = 1
            checkpoint.nextPublication = 1
            return checkpoint
        }
        message.publications = [Data([UInt8(number)])]
        return message
    }

    static func acks(_ out: ReplicaState.Output) -> [UInt64] {
        out.actions.map { if case .ack(_, let number) = $0 { number } else { 0 } }
    }

    @Test("a replica applies steps in order, asks for a snapshot on a gap (not more than once per retry), and ignores older actives")
    func theReplicaAppliesInOrder() {
        var replica = ReplicaState(settings: .init(maxOpen: 4, maxEnded: 8), tracking: .init())
        // Nothing yet: a step is not enough, a snapshot is asked for.
        var out = replica.receive(Self.replication(3, streams: ["a"]), at: 0)
        #expect(Self.acks(out) == [0] && !replica.isCurrent)
        out = replica.receive(Self.replication(4), at: 1)
        #expect(Self.acks(out).isEmpty, "asked once per retry")
        out = replica.receive(Self.replication(4, snapshot: true, streams: ["a", "b"]), at: 2)
        #expect(Self.acks(out) == [4] && replica.openCount == 2 && replica.replayPublications == [Data([4])])
        out = replica.receive(Self.replication(5, through: 4, streams: ["c"]), at: 3)
        #expect(Self.acks(out) == [5] && replica.openCount == 3 && replica.replayPublications == [Data([5])])
        // The cap on open streams.
        out = replica.receive(Self.replication(6, streams: ["d", "e"]), at: 4)
        #expect(replica.openCount == 4 && out.total("replication_refused_streams_cap") == 1)
        // A gap.
        out = replica.receive(Self.replication(8), at: 5)
        #expect(out.total("replication_gap") == 1 && !replica.isCurrent)
        // An older active's message is ignored.
        out = replica.receive(Self.replication(1, epoch: 4, snapshot: true), at: 1_000_000_000)
        #expect(out.total("replication_stale_epoch") == 1 && replica.openCount == 4)
        // A newer active needs a snapshot; the state stays until one comes.
        out = replica.receive(Self.replication(9, epoch: 6), at: 2_000_000_000)
        #expect(Self.acks(out) == [0] && replica.openCount == 4 && replica.leaderEpoch == 6)
    }

    @Test("kept publications are bounded in bytes, and what overflows is counted")
    func replayIsBounded() {
        var replica = ReplicaState(settings: .init(maxOpen: 4, maxEnded: 8, maxReplayBytes: 3), tracking: .init())
        _ = replica.receive(Self.replication(1, snapshot: true), at: 0)
        var total: UInt64 = 0
        for number in UInt64(2)...6 { total += replica.receive(Self.replication(number), at: number).total("replication_replay_dropped") }
        #expect(replica.replayPublications.count == 3 && total == 3, "the snapshot's and the next two steps' went")
    }

    @Test("closed checkpoints forget the stream and are remembered, bounded")
    func closedAreBounded() {
        var replica = ReplicaState(settings: .init(maxOpen: 4, maxEnded: 4), tracking: .init())
        _ = replica.receive(Self.replication(1, snapshot: true, streams: ["a"]), at: 0)
        for number in UInt64(2)...20 {
            var message = Self.replication(number)
            var checkpoint = StreamCheckpoint()
            checkpoint.stream = "s\(number)"
            checkpoint.epoch = 1
            checkpoint.closed = true
            message.checkpoints = [checkpoint]
            _ = replica.receive(message, at: number)
        }
        #expect(replica.closedKeys.count <= 4 && replica.closedKeys.contains(.init(stream: "s20", epoch: 1)))
    }
}

/// What the active writes into the leader key, read back by a standby that trusts nothing in it.
@Suite("LeaderValue")
struct LeaderValueTests {
    @Test func aValueReadsBack() {
        let value = LeaderValue(control: "tcp://10.0.0.1:5556", publish: "tcp://10.0.0.1:5557", replication: "tcp://10.0.0.1:5558")
        #expect(LeaderValue(parsing: value.text) == value)
    }

    @Test("values that are not a collector's are refused", arguments: [
        "", "facewire/2 control=tcp://a:1 publish=tcp://a:2 replication=tcp://a:3",
        "facewire/1 control=tcp://a:1 publish=tcp://a:2",
        "facewire/1 control=tcp://a:1 publish=tcp://a:2 replication=http://a:3",
        "facewire/1 control=tcp://*:1 publish=tcp://a:2 replication=tcp://a:3",
        "facewire/1 control=tcp://a:1 control=tcp://b:1 publish=tcp://a:2 replication=tcp://a:3",
        "facewire/1 control=tcp://a:1 publish=tcp://a:2 replication=tcp://" + String(repeating: "a", count: 300),
        "facewire/1 control=tcp://a:1 publish=tcp://a:2 replication=tcp://a:3 " + String(repeating: "x", count: 2000),
        "facewire/1 control publish=tcp://a:2 replication=tcp://a:3",
    ])
    func foreignValuesAreRefused(_ text: String) {
        #expect(LeaderValue(parsing: text) == nil)
    }
}
