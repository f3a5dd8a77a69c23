import FacewireVocabulary

/// Which collector of a group publishes (issue 29): an election through a coordination service that offers leases and
/// an atomic put-if-absent (etcd v3), decided here as a pure state machine. The shell turns each ``Action`` into a
/// request to the service and hands back what it answered (or that it failed), with the time; no sockets, no clock.
///
/// The scheme is the one Patroni runs on etcd: every collector holds a lease of its own, renewed every third of its
/// time to live; one key names the active collector and is attached to its lease. A collector that finds the key
/// absent writes it (put-if-absent) and is **active**; one that finds it held is **standby** and watches the key until
/// it is deleted (its holder resigned, or its lease expired), then tries again.
///
/// **Fencing.** The key's create revision is the active's **epoch**: the service's revisions only grow, so a later
/// active always has a greater one, and every node that hears two collectors follows the greater epoch. The active
/// stops acting by its own monotonic clock at the last successful renewal's *send* time plus the time to live less a
/// margin, whether or not the service answers: the service cannot have let the lease expire before that, so a
/// partitioned active has stopped before a standby can be elected (barring a process paused longer than the margin,
/// which the epoch check covers).
///
/// Every value from the service is checked: a time to live ≤ 0 is a lost lease, one above ``Settings/maxTTLSeconds`` is
/// cut to it; a revision ≤ 0, or an epoch not above the highest seen, is refused and counted; the holder's value is cut
/// to ``Settings/maxValueBytes`` before it is logged.
public struct LeaderElection {
    /// Times and bounds.
    public struct Settings: Sendable {
        /// The lease's time to live asked for (the service may grant more: etcd's minimum is 1.5 × its election timeout).
        public var ttlSeconds: Int64 = 2
        /// A granted time to live above this is treated as this (a service's absurd answer cannot keep an active alive).
        public var maxTTLSeconds: Int64 = 60
        /// The active stops this long before its lease could have expired (clock rates, the time to stop publishing).
        public var marginNs: UInt64 = 300_000_000
        /// A failed request is tried again after this long.
        public var retryNs: UInt64 = 250_000_000
        /// The most bytes of the holder's value kept for logs and the standby's role.
        public var maxValueBytes = 256
        /// What this collector writes into the key when it wins: how others reach it (its endpoint, its id).
        public var value: String
        /// How long a standby without a current copy of the active's state (``LeaderElection/lacksState``) waits, after
        /// the key went, before it tries to take it: a standby that has the state wins first. 0: no wait.
        public var withoutStateDelayNs: UInt64 = 0

        public init(value: String) { self.value = value }
    }

    /// The collector's part now.
    public enum Role: Equatable, Sendable {
        /// Not publishing: another collector holds the key (its value, if known), or none is known yet.
        case standby(leader: String?)
        /// Publishing, with this epoch (the key's create revision).
        case active(epoch: UInt64)
    }

    /// What the shell asks the service, and the role changes it carries out.
    public enum Action: Equatable, Sendable {
        /// Grant a new lease with this time to live (answer: ``LeaderElection/leaseGranted(id:ttlSeconds:sentAtNs:at:)``).
        case grantLease(ttlSeconds: Int64)
        /// Renew the lease (answer: ``LeaderElection/renewed(lease:ttlSeconds:sentAtNs:at:)``).
        case renew(lease: Int64)
        /// Write the leader key with `value`, attached to `lease`, only if it is absent (answer:
        /// ``LeaderElection/acquired(revision:lease:at:)`` or ``LeaderElection/heldBy(value:createRevision:lease:at:)``).
        case acquire(lease: Int64, value: String)
        /// Watch the leader key for changes after `revision` (answer: ``LeaderElection/leaderKeyDeleted(at:)``).
        case watch(afterRevision: Int64)
        /// Stop watching (this collector is active).
        case stopWatching
        /// Revoke the lease (the collector stops; its key goes with the lease).
        case revoke(lease: Int64)
        /// Start publishing with `epoch` (fencing token).
        case becomeActive(epoch: UInt64)
        /// Stop publishing now; `leader` is the holder's value, if known.
        case becomeStandby(leader: String?)
    }

    /// The requests the election makes, to say which one failed.
    public enum Request: String, Sendable {
        case grant, renew, acquire, watch
    }

    public typealias Output = Effects<Action>

    public let settings: Settings
    public private(set) var role = Role.standby(leader: nil)
    /// The highest epoch this collector has seen (its own or a holder's): an epoch is never announced twice.
    public private(set) var highestEpoch: UInt64 = 0
    /// The epoch this collector was last active with (an epoch is announced at most once).
    private var lastActiveEpoch: UInt64 = 0
    /// Set by the shell while this collector follows an active whose state it does not have yet (no snapshot arrived):
    /// taking over now would lose what the active published last (SPEC.md 18.5), so it lets a standby that has it go
    /// first (``Settings/withoutStateDelayNs``).
    public var lacksState = false

    /// The lease held, with its time to live, and when the last renewal that succeeded was sent.
    struct Lease {
        var id: Int64
        var ttlNs: UInt64
        var renewedSentAtNs: UInt64
    }

    private var lease: Lease?
    /// When a grant or renewal was sent and not yet answered (one at a time).
    private var grantInFlight = false
    private var renewalSentAtNs: UInt64?
    private var acquireInFlight = false
    private var watching = false
    private var stopped = false
    /// A failed request waits until this time before it is made again.
    private var retryAtNs: [Request: UInt64] = [:]

    public init(settings: Settings) {
        self.settings = settings
    }

    // MARK: - Inputs

    /// The collector starts: it asks for a lease.
    public mutating func start(at now: Instant) -> Output {
        var out = Output()
        requestLease(at: now.monotonicNs, into: &out)
        return out
    }

    /// The service granted lease `id` (asked at `sentAtNs`) with `ttlSeconds`.
    public mutating func leaseGranted(id: Int64, ttlSeconds: Int64, sentAtNs: UInt64, at now: Instant) -> Output {
        var out = Output()
        grantInFlight = false
        guard !stopped, lease == nil else {
            out.act(.revoke(lease: id))  // granted after the stop, or a second one: not kept
            return out
        }
        guard let ttlNs = validTTL(ttlSeconds, into: &out) else {
            fail(.grant, at: now.monotonicNs, into: &out)
            return out
        }
        lease = Lease(id: id, ttlNs: ttlNs, renewedSentAtNs: sentAtNs)
        out.count("election_leases_granted")
        tryToAcquire(at: now.monotonicNs, into: &out)
        return out
    }

    /// The service renewed `lease` (the renewal was sent at `sentAtNs`); a time to live ≤ 0 means the lease is gone.
    /// An answer about a lease given up since is ignored (`election_answers_stale`).
    public mutating func renewed(lease renewedLease: Int64, ttlSeconds: Int64, sentAtNs: UInt64, at now: Instant) -> Output {
        var out = Output()
        guard lease?.id == renewedLease else {
            out.count("election_answers_stale")
            return out
        }
        renewalSentAtNs = nil
        guard ttlSeconds > 0, let ttlNs = validTTL(ttlSeconds, into: &out) else {
            out.count("election_leases_lost")
            out.log(.warning, "the election lease is gone: this collector stands down and asks for a new one")
            loseLease(at: now.monotonicNs, into: &out)
            return out
        }
        if var renewed = lease {
            renewed.ttlNs = ttlNs
            renewed.renewedSentAtNs = max(renewed.renewedSentAtNs, sentAtNs)
            lease = renewed
        }
        return out
    }

    /// The put-if-absent with `lease` wrote the key at `revision`: this collector is active with that epoch. A write
    /// with a lease given up since is ignored (`election_answers_stale`): its key goes with that lease, and a collector
    /// active on it would publish while another takes the key.
    public mutating func acquired(revision: Int64, lease writtenWith: Int64, at now: Instant) -> Output {
        var out = Output()
        guard lease?.id == writtenWith else {
            out.count("election_answers_stale")
            return out
        }
        acquireInFlight = false
        takeOver(revision: revision, at: now.monotonicNs, into: &out)
        return out
    }

    /// The key is held: by `value` since `createRevision`, attached to `lease`.
    public mutating func heldBy(value: String, createRevision: Int64, lease holderLease: Int64, at now: Instant) -> Output {
        var out = Output()
        acquireInFlight = false
        guard createRevision > 0 else {
            out.count("election_epoch_refused")
            fail(.acquire, at: now.monotonicNs, into: &out)
            return out
        }
        if let lease, holderLease == lease.id {
            // This collector's own write (its answer was lost, or came after a timeout): it holds the key.
            takeOver(revision: createRevision, at: now.monotonicNs, into: &out)
            return out
        }
        highestEpoch = max(highestEpoch, UInt64(createRevision))
        let holder = String(decoding: value.utf8.prefix(settings.maxValueBytes), as: UTF8.self)
        if case .active = role {
            // Only reached if this collector thought it was active while another holds the key: stand down at once.
            out.count("election_stood_down")
            role = .standby(leader: holder)
            out.act(.becomeStandby(leader: holder))
        } else if role != .standby(leader: holder) {
            role = .standby(leader: holder)
            out.log(.info, "another collector is active: standing by", ["leader": holder, "epoch": "\(createRevision)"])
            out.act(.becomeStandby(leader: holder))
        }
        watching = true
        out.act(.watch(afterRevision: createRevision))
        return out
    }

    /// The watched key was deleted (its holder resigned, or its lease expired): try to take it.
    public mutating func leaderKeyDeleted(at now: Instant) -> Output {
        var out = Output()
        watching = false
        out.count("election_leader_gone")
        if lacksState, settings.withoutStateDelayNs > 0 {
            // Tried again by tick() once the delay passed, if no standby with the state took the key meanwhile.
            out.count("election_deferred_without_state")
            out.log(.notice, "the active is gone, but this standby has no copy of its state yet: it lets one that has go first")
            retryAtNs[.acquire] = now.monotonicNs.addingClamped(settings.withoutStateDelayNs)
            return out
        }
        tryToAcquire(at: now.monotonicNs, into: &out)
        return out
    }

    /// A request failed (the service is unreachable, answered an error or nothing usable): it is made again after
    /// ``Settings/retryNs``. An active collector keeps publishing until its deadline.
    public mutating func failed(_ request: Request, at now: Instant) -> Output {
        var out = Output()
        switch request {
        case .grant: grantInFlight = false
        case .renew: renewalSentAtNs = nil
        case .acquire: acquireInFlight = false
        case .watch: watching = false
        }
        fail(request, at: now.monotonicNs, into: &out)
        return out
    }

    /// The collector stops (SIGTERM): it stands down and revokes its lease, which deletes the key at once, so that a
    /// standby takes over without waiting for the lease to expire.
    public mutating func stop(at now: Instant) -> Output {
        var out = Output()
        if case .active = role {
            role = .standby(leader: nil)
            out.act(.becomeStandby(leader: nil))
        }
        if watching {
            watching = false
            out.act(.stopWatching)
        }
        if let lease { out.act(.revoke(lease: lease.id)) }
        lease = nil
        stopped = true
        return out
    }

    /// Time passed: a renewal may be due, an active collector whose lease may have expired stands down, failed requests
    /// are made again.
    public mutating func tick(at now: Instant) -> Output {
        var out = Output()
        let t = now.monotonicNs
        guard !stopped else { return out }
        if case .active = role, let deadline = activeDeadline, t >= deadline {
            out.count("election_deadline_passed")
            out.log(.warning, "no renewal of the election lease in time: this collector stops publishing before it could expire")
            loseLease(revoking: true, at: t, into: &out)
        }
        guard let lease else {
            if retryAtNs[.grant].map({ t >= $0 }) ?? true { requestLease(at: t, into: &out) }
            return out
        }
        if renewalSentAtNs == nil, t >= lease.renewedSentAtNs.addingClamped(lease.ttlNs / 3),
            retryAtNs[.renew].map({ t >= $0 }) ?? true
        {
            renewalSentAtNs = t
            out.act(.renew(lease: lease.id))
        }
        if case .standby = role, !watching, !acquireInFlight, retryAtNs[.acquire].map({ t >= $0 }) ?? true {
            tryToAcquire(at: t, into: &out)
        }
        return out
    }

    // MARK: - Observing

    /// When the active collector must have stopped publishing (nil without a lease): the last renewal's send time plus the
    /// time to live, less the margin.
    public var activeDeadline: UInt64? {
        lease.map { $0.renewedSentAtNs.addingClamped($0.ttlNs).saturatingDistance(from: settings.marginNs) }
    }

    /// The earliest time ``tick(at:)`` has something to do.
    public var nextDeadline: UInt64? {
        var times: [UInt64] = Array(retryAtNs.values)
        if let lease {
            if renewalSentAtNs == nil { times.append(lease.renewedSentAtNs.addingClamped(lease.ttlNs / 3)) }
            if case .active = role, let deadline = activeDeadline { times.append(deadline) }
        }
        return times.min()
    }

    // MARK: - Decisions

    /// Becomes active with the key written at `revision`, if that epoch is new and the lease cannot have expired.
    private mutating func takeOver(revision: Int64, at now: UInt64, into out: inout Output) {
        guard lease != nil, case .standby = role else { return }
        guard revision > 0, UInt64(revision) >= highestEpoch, UInt64(revision) > lastActiveEpoch else {
            out.count("election_epoch_refused")
            out.log(.error, "the coordination service answered an epoch below one already seen: not taking over", [
                "revision": "\(revision)", "highest": "\(highestEpoch)",
            ])
            fail(.acquire, at: now, into: &out)
            return
        }
        guard let deadline = activeDeadline, now < deadline else {
            // The lease may have expired while the write was on its way (the key then goes with it): try again later.
            out.count("election_acquired_too_late")
            fail(.acquire, at: now, into: &out)
            return
        }
        let epoch = UInt64(revision)
        highestEpoch = epoch
        lastActiveEpoch = epoch
        role = .active(epoch: epoch)
        out.count("election_became_active")
        out.log(.notice, "this collector is active", ["epoch": "\(epoch)"])
        if watching {
            watching = false
            out.act(.stopWatching)
        }
        out.act(.becomeActive(epoch: epoch))
    }

    private func validTTL(_ seconds: Int64, into out: inout Output) -> UInt64? {
        guard seconds > 0 else { return nil }
        if seconds > settings.maxTTLSeconds { out.count("election_ttl_cut") }
        return UInt64(min(seconds, settings.maxTTLSeconds)) * 1_000_000_000
    }

    private mutating func requestLease(at now: UInt64, into out: inout Output) {
        guard !grantInFlight else { return }
        grantInFlight = true
        retryAtNs[.grant] = nil
        out.act(.grantLease(ttlSeconds: settings.ttlSeconds))
    }

    private mutating func tryToAcquire(at now: UInt64, into out: inout Output) {
        guard let lease, !acquireInFlight else { return }
        acquireInFlight = true
        retryAtNs[.acquire] = nil
        out.act(.acquire(lease: lease.id, value: settings.value))
    }

    /// Stands down if active, gives the lease up and asks for a new one. A lease given up at the deadline may still be
    /// alive at the service (its renewals arrived, their answers did not): it is revoked, so that the key it holds
    /// goes at once and a standby need not wait out its time to live.
    private mutating func loseLease(revoking: Bool = false, at now: UInt64, into out: inout Output) {
        if case .active = role {
            role = .standby(leader: nil)
            out.act(.becomeStandby(leader: nil))
        }
        if revoking, let lease { out.act(.revoke(lease: lease.id)) }
        lease = nil
        renewalSentAtNs = nil
        if watching {
            watching = false
            out.act(.stopWatching)
        }
        requestLease(at: now, into: &out)
    }

    private mutating func fail(_ request: Request, at now: UInt64, into out: inout Output) {
        out.count("election_\(request.rawValue)_failed")
        retryAtNs[request] = now.addingClamped(settings.retryNs)
    }
}
