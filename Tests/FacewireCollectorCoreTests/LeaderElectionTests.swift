import FacewireFuzzing
import FacewireVocabulary
import Testing

@testable import FacewireCollectorCore

/// A ``LeaderElection`` driven by hand: a fake clock, every action it asked for, and the role it announced last.
private struct ElectionRig {
    var election: LeaderElection
    var clockNs: UInt64 = 1_000_000_000
    var actions: [LeaderElection.Action] = []
    var counts: [String: UInt64] = [:]

    init(value: String = "tcp://a:5556", configure: (inout LeaderElection.Settings) -> Void = { _ in }) {
        var settings = LeaderElection.Settings(value: value)
        configure(&settings)
        election = LeaderElection(settings: settings)
    }

    var now: Instant { Instant(monotonicNs: clockNs, wallUs: Int64(clockNs / 1000)) }
    mutating func advance(ms: UInt64) { clockNs += ms * 1_000_000 }
    mutating func record(_ output: LeaderElection.Output) {
        actions += output.actions
        for count in output.counts { counts[count.name, default: 0] += count.amount }
    }
    /// The role changes announced so far.
    var announced: [LeaderElection.Action] {
        actions.filter { if case .becomeActive = $0 { true } else if case .becomeStandby = $0 { true } else { false } }
    }
    /// Starts, is granted lease `lease` (TTL 2 s) at once, and answers its acquire with `acquire`.
    mutating func startHolding(lease: Int64 = 7) {
        record(election.start(at: now))
        record(election.leaseGranted(id: lease, ttlSeconds: 2, sentAtNs: clockNs, at: now))
    }
}

@Suite("LeaderElection: who publishes")
struct LeaderElectionTests {
    @Test("a collector that finds the key absent is active with the key's revision as its epoch, and renews every third of the TTL")
    func becomesActive() {
        var rig = ElectionRig()
        rig.record(rig.election.start(at: rig.now))
        #expect(rig.actions == [.grantLease(ttlSeconds: 2)])
        rig.record(rig.election.leaseGranted(id: 7, ttlSeconds: 2, sentAtNs: rig.clockNs, at: rig.now))
        #expect(rig.actions.last == .acquire(lease: 7, value: "tcp://a:5556"))
        rig.record(rig.election.acquired(revision: 41, lease: 7, at: rig.now))
        #expect(rig.election.role == .active(epoch: 41))
        #expect(rig.actions.last == .becomeActive(epoch: 41))
        rig.advance(ms: 666)
        rig.record(rig.election.tick(at: rig.now))
        #expect(!rig.actions.contains(.renew(lease: 7)), "not before a third of the TTL")
        rig.advance(ms: 1)
        rig.record(rig.election.tick(at: rig.now))
        #expect(rig.actions.last == .renew(lease: 7))
        rig.record(rig.election.tick(at: rig.now))
        #expect(rig.actions.filter { $0 == .renew(lease: 7) }.count == 1, "one renewal at a time")
    }

    @Test("an active collector whose renewals go unanswered stops publishing before its lease could expire, by its own clock")
    func standsDownAtDeadline() {
        var rig = ElectionRig()
        rig.startHolding()
        let granted = rig.clockNs
        rig.record(rig.election.acquired(revision: 41, lease: 7, at: rig.now))
        // Renewals are sent and never answered (a partition): the deadline is the grant's send time + 2 s - 300 ms.
        #expect(rig.election.activeDeadline == granted + 1_700_000_000)
        for _ in 0..<169 {
            rig.advance(ms: 10)
            rig.record(rig.election.tick(at: rig.now))
            #expect(rig.election.role == .active(epoch: 41))
        }
        rig.advance(ms: 10)
        rig.record(rig.election.tick(at: rig.now))
        #expect(rig.election.role == .standby(leader: nil))
        #expect(rig.announced == [.becomeActive(epoch: 41), .becomeStandby(leader: nil)])
        #expect(rig.actions.suffix(2) == [.revoke(lease: 7), .grantLease(ttlSeconds: 2)], "gives the lease up (its key goes) and asks for a new one")
        #expect(rig.counts["election_deadline_passed"] == 1)
    }

    @Test("a renewal moves the deadline from the time it was sent, not the time it was answered")
    func renewalFromSendTime() {
        var rig = ElectionRig()
        rig.startHolding()
        rig.record(rig.election.acquired(revision: 41, lease: 7, at: rig.now))
        rig.advance(ms: 700)
        rig.record(rig.election.tick(at: rig.now))
        let sent = rig.clockNs
        rig.advance(ms: 900)  // a slow answer
        rig.record(rig.election.renewed(lease: 7, ttlSeconds: 2, sentAtNs: sent, at: rig.now))
        #expect(rig.election.activeDeadline == sent + 1_700_000_000)
    }

    @Test("a collector that finds the key held stands by, watches it, and takes over with a greater epoch once it is deleted")
    func standsByThenTakesOver() {
        var rig = ElectionRig(value: "tcp://b:5556")
        rig.startHolding(lease: 9)
        rig.record(rig.election.heldBy(value: "tcp://a:5556", createRevision: 41, lease: 7, at: rig.now))
        #expect(rig.election.role == .standby(leader: "tcp://a:5556"))
        #expect(rig.actions.last == .watch(afterRevision: 41))
        rig.advance(ms: 2000)
        rig.record(rig.election.tick(at: rig.now))
        #expect(rig.actions.filter { if case .acquire = $0 { true } else { false } }.count == 1, "no new attempt while the watch holds")
        rig.record(rig.election.leaderKeyDeleted(at: rig.now))
        #expect(rig.actions.last == .acquire(lease: 9, value: "tcp://b:5556"))
        rig.record(rig.election.renewed(lease: 9, ttlSeconds: 2, sentAtNs: rig.clockNs, at: rig.now))
        rig.record(rig.election.acquired(revision: 57, lease: 9, at: rig.now))
        #expect(rig.election.role == .active(epoch: 57))
        #expect(rig.announced == [.becomeStandby(leader: "tcp://a:5556"), .becomeActive(epoch: 57)])
    }

    @Test("a standby without the active's state lets one that has it go first: it tries only once the delay passed")
    func aStandbyWithoutStateWaits() {
        var rig = ElectionRig(value: "tcp://c:5556") { $0.withoutStateDelayNs = 4_000_000_000 }
        rig.startHolding(lease: 9)
        rig.record(rig.election.heldBy(value: "tcp://a:5556", createRevision: 41, lease: 7, at: rig.now))
        func acquires() -> Int { rig.actions.filter { if case .acquire = $0 { true } else { false } }.count }
        let before = acquires()
        rig.election.lacksState = true
        rig.record(rig.election.leaderKeyDeleted(at: rig.now))
        #expect(acquires() == before && rig.counts["election_deferred_without_state"] == 1)
        rig.advance(ms: 3900)
        rig.record(rig.election.tick(at: rig.now))
        #expect(acquires() == before, "not before the delay")
        rig.advance(ms: 200)
        rig.record(rig.election.tick(at: rig.now))
        #expect(acquires() == before + 1, "then it tries: no standby had the state, the group must not stay without an active")
        // With the state, at once.
        var warm = ElectionRig(value: "tcp://b:5556") { $0.withoutStateDelayNs = 4_000_000_000 }
        warm.startHolding(lease: 9)
        warm.record(warm.election.heldBy(value: "tcp://a:5556", createRevision: 41, lease: 7, at: warm.now))
        warm.record(warm.election.leaderKeyDeleted(at: warm.now))
        #expect(warm.actions.last == .acquire(lease: 9, value: "tcp://b:5556"))
    }

    @Test("its own write seen as held (the answer was lost) makes it active; an answer after its deadline does not")
    func ownWriteAndLateAnswer() {
        var rig = ElectionRig()
        rig.startHolding()
        rig.record(rig.election.failed(.acquire, at: rig.now))
        rig.advance(ms: 250)
        rig.record(rig.election.tick(at: rig.now))
        rig.record(rig.election.heldBy(value: "tcp://a:5556", createRevision: 41, lease: 7, at: rig.now))
        #expect(rig.election.role == .active(epoch: 41))

        var late = ElectionRig()
        late.startHolding()
        late.advance(ms: 1700)  // no renewal answered: the lease may be gone by the time the write's answer comes
        late.record(late.election.acquired(revision: 41, lease: 7, at: late.now))
        #expect(late.election.role == .standby(leader: nil))
        #expect(late.counts["election_acquired_too_late"] == 1)
    }

    @Test("absurd answers: a TTL of 0 or less is a lost lease, a huge one is cut, revisions at or below 0 or below one seen are refused")
    func hostileAnswers() {
        var rig = ElectionRig()
        rig.record(rig.election.start(at: rig.now))
        rig.record(rig.election.leaseGranted(id: 7, ttlSeconds: Int64.max, sentAtNs: rig.clockNs, at: rig.now))
        #expect(rig.election.activeDeadline == rig.clockNs + 60_000_000_000 - 300_000_000, "cut to 60 s")
        #expect(rig.counts["election_ttl_cut"] == 1)
        rig.record(rig.election.acquired(revision: 0, lease: 7, at: rig.now))
        rig.record(rig.election.acquired(revision: Int64.min, lease: 7, at: rig.now))
        #expect(rig.election.role == .standby(leader: nil))
        rig.record(rig.election.heldBy(value: String(repeating: "x", count: 100_000), createRevision: 90, lease: 3, at: rig.now))
        guard case .standby(let leader?) = rig.election.role else {
            Issue.record("not standing by")
            return
        }
        #expect(leader.utf8.count == 256, "the holder's value is cut")
        rig.record(rig.election.leaderKeyDeleted(at: rig.now))
        rig.record(rig.election.acquired(revision: 89, lease: 7, at: rig.now))
        #expect(rig.election.role == .standby(leader: leader), "an epoch below one seen is refused")
        #expect(rig.counts["election_epoch_refused"] == 3)
        rig.record(rig.election.renewed(lease: 7, ttlSeconds: -5, sentAtNs: rig.clockNs, at: rig.now))
        #expect(rig.election.activeDeadline == nil, "a negative TTL: the lease is gone")
        #expect(rig.actions.last == .grantLease(ttlSeconds: 2))
        rig.record(rig.election.leaseGranted(id: 8, ttlSeconds: 0, sentAtNs: rig.clockNs, at: rig.now))
        #expect(rig.election.activeDeadline == nil, "a lease granted with TTL 0 is not kept")
        #expect(rig.counts["election_grant_failed"] == 1)
    }

    @Test("answers about a lease given up since are ignored: a write with it does not make the collector active, its loss does not end the new lease")
    func staleAnswers() {
        var rig = ElectionRig()
        rig.startHolding(lease: 7)
        rig.record(rig.election.acquired(revision: 41, lease: 7, at: rig.now))
        rig.advance(ms: 1700)
        rig.record(rig.election.tick(at: rig.now))  // no renewal answered: lease 7 given up, a new one asked for
        #expect(rig.actions.suffix(2) == [.revoke(lease: 7), .grantLease(ttlSeconds: 2)])
        rig.record(rig.election.leaseGranted(id: 8, ttlSeconds: 2, sentAtNs: rig.clockNs, at: rig.now))
        // Late answers about lease 7: a retried write's, and its loss.
        rig.record(rig.election.acquired(revision: 50, lease: 7, at: rig.now))
        #expect(rig.election.role == .standby(leader: nil), "a key written with lease 7 goes with it")
        rig.record(rig.election.renewed(lease: 7, ttlSeconds: 0, sentAtNs: rig.clockNs, at: rig.now))
        #expect(rig.election.activeDeadline != nil, "lease 8 is kept")
        #expect(rig.counts["election_answers_stale"] == 2)
        rig.record(rig.election.acquired(revision: 52, lease: 8, at: rig.now))
        #expect(rig.election.role == .active(epoch: 52))
        rig.record(rig.election.leaseGranted(id: 9, ttlSeconds: 2, sentAtNs: rig.clockNs, at: rig.now))
        #expect(rig.actions.last == .revoke(lease: 9), "a second lease is not kept")
    }

    @Test("failed requests are made again after the retry interval, not before")
    func retries() {
        var rig = ElectionRig()
        rig.record(rig.election.start(at: rig.now))
        rig.record(rig.election.failed(.grant, at: rig.now))
        rig.advance(ms: 249)
        rig.record(rig.election.tick(at: rig.now))
        #expect(rig.actions == [.grantLease(ttlSeconds: 2)])
        rig.advance(ms: 1)
        rig.record(rig.election.tick(at: rig.now))
        #expect(rig.actions == [.grantLease(ttlSeconds: 2), .grantLease(ttlSeconds: 2)])
        #expect(rig.election.nextDeadline == nil, "nothing to wait for while the grant is out")
    }

    @Test("a stopping active collector stands down and revokes its lease; a lease granted after the stop is revoked too")
    func stop() {
        var rig = ElectionRig()
        rig.startHolding()
        rig.record(rig.election.acquired(revision: 41, lease: 7, at: rig.now))
        rig.record(rig.election.stop(at: rig.now))
        #expect(rig.actions.suffix(2) == [.becomeStandby(leader: nil), .revoke(lease: 7)])
        rig.advance(ms: 5000)
        rig.record(rig.election.tick(at: rig.now))
        #expect(rig.actions.last == .revoke(lease: 7), "nothing more after the stop")
        rig.record(rig.election.leaseGranted(id: 8, ttlSeconds: 2, sentAtNs: rig.clockNs, at: rig.now))
        #expect(rig.actions.last == .revoke(lease: 8))
    }
}

/// Three collectors and a model of the coordination service (leases that expire by the service's clock, one key
/// written only if absent and deleted with its lease, watches), with requests and answers delayed at random, some lost
/// (a timeout then fails them), and collectors killed (silent for good) or cut off (a partition: nothing reaches the
/// service for a while). A discrete-event simulation on one clock: no sockets, no sleeps.
private struct ElectionWorld {
    struct Service {
        var leases: [Int64: UInt64] = [:]  // id → expires at (ns)
        var ttlNs: [Int64: UInt64] = [:]
        var key: (value: String, createRevision: Int64, lease: Int64)?
        var revision: Int64 = 100
        var nextLease: Int64 = 1

        mutating func expire(at now: UInt64) {
            for (id, expiry) in leases.sorted(by: { $0.key < $1.key }) where expiry <= now {
                leases[id] = nil
                if key?.lease == id { key = nil }
                revision += 1
            }
        }
    }

    enum Event {
        case tick(Int)
        case request(Int, LeaderElection.Action, sentAt: UInt64)
        case answer(Int, (inout LeaderElection, Instant) -> LeaderElection.Output)
    }

    var service = Service()
    var collectors: [LeaderElection]
    var dead: Set<Int> = []
    var cutOffUntil: [Int: UInt64] = [:]
    var watching: Set<Int> = []
    var queue: [(at: UInt64, order: Int, event: Event)] = []
    var order = 0
    var random: SplitMix64
    var now: UInt64 = 0
    /// When the last kill or partition ended.
    var troubleOverAt: UInt64 = 0
    /// (start, end) of each collector's active spells.
    var spells: [[(UInt64, UInt64?)]]

    init(seed: UInt64, collectors count: Int) {
        random = SplitMix64(seed: seed)
        collectors = (0..<count).map { LeaderElection(settings: LeaderElection.Settings(value: "c\($0)")) }
        spells = Array(repeating: [], count: count)
    }

    mutating func schedule(_ event: Event, after delayNs: UInt64) {
        order += 1
        queue.append((now + delayNs, order, event))
    }

    func instant(_ t: UInt64) -> Instant { Instant(monotonicNs: t, wallUs: Int64(t / 1000)) }

    mutating func apply(_ index: Int, _ output: LeaderElection.Output) {
        for action in output.actions {
            switch action {
            case .becomeActive: spells[index].append((now, nil))
            case .becomeStandby:
                if let last = spells[index].last, last.1 == nil { spells[index][spells[index].count - 1].1 = now }
            case .stopWatching: watching.remove(index)
            default:
                schedule(.request(index, action, sentAt: now), after: UInt64.random(in: 0...300_000_000, using: &random))
            }
        }
    }

    /// The service expires the leases its clock has passed; a key deleted with its lease wakes every watcher.
    mutating func expireLeases() {
        let held = service.key != nil
        service.expire(at: now)
        guard held, service.key == nil else { return }
        for index in watching.sorted() { schedule(.answer(index, { $0.leaderKeyDeleted(at: $1) }), after: 1_000_000) }
        watching.removeAll()
    }

    /// The service handles a request that reached it (unless its sender is cut off), and the answer travels back (or
    /// is lost: the shell's timeout fails it 500 ms after it was sent).
    mutating func serve(_ index: Int, _ action: LeaderElection.Action, sentAt: UInt64) {
        let lost = cutOffUntil[index].map { now < $0 } == true || UInt64.random(in: 0..<20, using: &random) == 0
        expireLeases()
        var answer: ((inout LeaderElection, Instant) -> LeaderElection.Output)?
        var request: LeaderElection.Request?
        switch action {
        case .grantLease(let ttl):
            request = .grant
            if !lost {
                let id = service.nextLease
                service.nextLease += 1
                service.leases[id] = now + UInt64(ttl) * 1_000_000_000
                service.ttlNs[id] = UInt64(ttl) * 1_000_000_000
                answer = { $0.leaseGranted(id: id, ttlSeconds: ttl, sentAtNs: sentAt, at: $1) }
            }
        case .renew(let lease):
            request = .renew
            if !lost {
                var ttl: Int64 = 0
                if service.leases[lease] != nil, let span = service.ttlNs[lease] {
                    service.leases[lease] = now + span
                    ttl = Int64(span / 1_000_000_000)
                }
                answer = { [ttl] in $0.renewed(lease: lease, ttlSeconds: ttl, sentAtNs: sentAt, at: $1) }
            }
        case .acquire(let lease, let value):
            request = .acquire
            if !lost {
                if let key = service.key {
                    answer = { $0.heldBy(value: key.value, createRevision: key.createRevision, lease: key.lease, at: $1) }
                } else if service.leases[lease] != nil {
                    service.revision += 1
                    let revision = service.revision
                    service.key = (value, revision, lease)
                    answer = { $0.acquired(revision: revision, lease: lease, at: $1) }
                } else {
                    answer = { $0.failed(.acquire, at: $1) }  // "requested lease not found"
                }
            }
        case .watch(let revision):
            if lost {
                request = .watch
            } else if service.key?.createRevision == revision {
                watching.insert(index)
            } else {
                // Deleted (or replaced) since that revision: a watch from it reports the deletion at once, as etcd's does.
                answer = { $0.leaderKeyDeleted(at: $1) }
            }
        case .revoke(let lease):
            if !lost, service.leases[lease] != nil {
                service.leases[lease] = now  // expires now: the key goes with it, and its watchers hear of it
                expireLeases()
            }
        default: break
        }
        if let answer {
            schedule(.answer(index, answer), after: UInt64.random(in: 0...300_000_000, using: &random))
        } else if let request, lost {
            schedule(.answer(index, { $0.failed(request, at: $1) }), after: sentAt + 500_000_000 > now ? sentAt + 500_000_000 - now : 0)
        }
    }

    /// Runs until `endNs`, killing or cutting off the active collector now and then.
    mutating func run(until endNs: UInt64) {
        for index in collectors.indices {
            apply(index, collectors[index].start(at: instant(now)))
            schedule(.tick(index), after: 10_000_000)
        }
        var nextTrouble: UInt64 = 5_000_000_000
        while let next = queue.indices.min(by: { (queue[$0].at, queue[$0].order) < (queue[$1].at, queue[$1].order) }) {
            let (at, _, event) = queue.remove(at: next)
            guard at <= endNs else { break }
            now = at
            expireLeases()
            if now >= nextTrouble, now + 15_000_000_000 < endNs {
                nextTrouble = now + UInt64.random(in: 3_000_000_000...8_000_000_000, using: &random)
                if let active = collectors.indices.first(where: { if case .active = collectors[$0].role { !dead.contains($0) } else { false } }) {
                    if Bool.random(using: &random), dead.count + 1 < collectors.count {
                        dead.insert(active)
                        troubleOverAt = max(troubleOverAt, now)
                        // A killed process publishes nothing more: its spell ends now.
                        if let last = spells[active].last, last.1 == nil { spells[active][spells[active].count - 1].1 = now }
                    } else {
                        cutOffUntil[active] = now + UInt64.random(in: 1_000_000_000...6_000_000_000, using: &random)
                        troubleOverAt = max(troubleOverAt, cutOffUntil[active]!)
                    }
                }
            }
            switch event {
            case .tick(let index):
                guard !dead.contains(index) else { continue }
                apply(index, collectors[index].tick(at: instant(now)))
                schedule(.tick(index), after: 10_000_000)
            case .request(let index, let action, let sentAt):
                serve(index, action, sentAt: sentAt)
            case .answer(let index, let body):
                guard !dead.contains(index) else { continue }
                let output = body(&collectors[index], instant(now))
                apply(index, output)
            }
        }
        for index in spells.indices {
            if let last = spells[index].last, last.1 == nil { spells[index][spells[index].count - 1].1 = endNs }
        }
    }
}

@Suite("LeaderElection: three collectors against a model of the service")
struct LeaderElectionWorldTests {
    @Test("never two active at once, epochs only grow, and a standby takes over after the active is killed", arguments: 0..<24)
    func atMostOneActive(seed: UInt64) {
        var world = ElectionWorld(seed: seed, collectors: 3)
        world.run(until: 60_000_000_000)
        let spells = world.spells.enumerated().flatMap { index, spells in spells.map { (index, $0.0, $0.1 ?? 0) } }.sorted { $0.1 < $1.1 }
        for (first, second) in zip(spells, spells.dropFirst()) {
            #expect(first.2 <= second.1, "seed \(seed): collector \(first.0) active until \(first.2), collector \(second.0) from \(second.1)")
        }
        #expect(spells.count >= 2, "seed \(seed): someone took over at least once (\(spells.count) spells)")
        let epochs = world.collectors.map(\.highestEpoch)
        #expect(epochs.allSatisfy { $0 > 0 })
        // The last kill or partition ends at least 9 s before the end; requests are still lost (one in twenty), which
        // can make an active stand down (two renewals in a row unanswered). After it, no stretch without an active
        // collector lasts longer than the lease (2 s) and a few round trips, lost ones included (each costs a 500 ms
        // timeout and a 250 ms retry; 2,000 seeds were run with this bound).
        let calm = world.troubleOverAt
        var covered = calm
        for spell in spells where spell.2 > covered {
            #expect(spell.1 <= covered || spell.1 - covered <= 5_000_000_000, "seed \(seed): nobody active from \(covered) to \(spell.1) (calm from \(calm))")
            covered = max(covered, spell.2)
        }
        #expect(60_000_000_000 - covered <= 5_000_000_000, "seed \(seed): nobody active from \(covered) to the end")
    }
}
