import FacewireCollectorCore
import FacewireProtocol
import FacewireRuntime
import FacewireTracking
import FacewireVocabulary
import Logging
import ZeroMQ

/// The failover part of the collector's loop (SPEC.md 18), on the loop's thread: the replication sockets, the active's
/// ``ReplicationSender`` or the standby's ``ReplicaState``, and the changes of role the election hands over (a
/// ``RoleBox``). The decisions are in those pure types; this shell moves bytes and swaps the node's core.
///
/// - Active: every step's checkpoints and publications go to the standbys; publications go out once the attached
///   standbys have acknowledged them (``ReplicationSender``).
/// - Standby: a DEALER connected to the active's replication endpoint (from the leader key) keeps a ``ReplicaState``;
///   the node's core answers every client with a Welcome naming the active.
/// - Taking over: a new core continues every stream from the replica, and publishes first what the old active may not
///   have published.
/// - Standing down (the lease could have expired): the core is dropped with everything it had not published.
final class FailoverShell {
    let settings: FailoverSettings
    let role: RoleBox
    let context: ZMQContext
    let security: CurveSecurity?
    let limits: CollectorLimits
    let tracking: FaceTracker.Configuration
    let logger: Logger
    /// This collector's leader value: what it writes into the key, and how it recognises itself there.
    let own: LeaderValue
    let replicationRouter: ZMQSocket
    /// The bound replication endpoint.
    let replicationEndpoint: String
    private(set) var dealer: ZMQSocket?
    private(set) var following: LeaderValue?
    private(set) var sender: ReplicationSender?
    private(set) var replica: ReplicaState
    private var appliedChanges: UInt64 = 0

    /// The largest replication message a standby accepts (a snapshot of every stream and its tracks).
    static let maxReplicationMessageBytes: Int64 = 256 << 20
    /// The largest message the active accepts on its replication socket (acknowledgements are a few bytes).
    static let maxAckBytes: Int64 = 4096

    init(
        settings: FailoverSettings, role: RoleBox, context: ZMQContext, security: CurveSecurity?, control: String, publish: String,
        limits: CollectorLimits, tracking: FaceTracker.Configuration, logger: Logger
    ) throws {
        self.settings = settings
        self.role = role
        self.context = context
        self.security = security
        self.limits = limits
        self.tracking = tracking
        self.logger = logger
        replica = Self.freshReplica(limits: limits, tracking: tracking)
        replicationRouter = try ZMQSocket(context: context, kind: .router)
        if let secret = security?.keyPair.secretKey { try replicationRouter.makeCurveServer(secretKey: secret) }
        try replicationRouter.setMaxMessageSize(Self.maxAckBytes)
        try replicationRouter.setRouterMandatory(true)
        try replicationRouter.setHighWaterMarks(send: 10_000, receive: 10_000)
        try replicationRouter.setLinger(milliseconds: 0)
        replicationEndpoint = try replicationRouter.bind(settings.replicationBind)
        own = settings.leaderValue(control: control, publish: publish, replication: replicationEndpoint)
    }

    static func freshReplica(limits: CollectorLimits, tracking: FaceTracker.Configuration) -> ReplicaState {
        let maxOpen = min(limits.maxStreams, Int.max / 2) * 2
        return ReplicaState(
            settings: .init(maxOpen: maxOpen, maxEnded: StreamTable<FrameResult>.maxEndedRemembered(maxOpen: limits.maxStreams)),
            tracking: tracking)
    }

    var sockets: [ZMQSocket] { [replicationRouter] + (dealer.map { [$0] } ?? []) }

    /// Whether this collector is the active one and replicates what it publishes.
    var isReplicating: Bool { sender != nil }

    func close() {
        dealer?.close()
        replicationRouter.close()
    }

    // MARK: - Roles

    /// Carries out the role the election gave last, if it changed.
    func applyRole(node: CollectorNode, router: ZMQSocket, publisher: ZMQSocket) {
        let (latest, changes) = role.value
        guard changes != appliedChanges, let latest else { return }
        appliedChanges = changes
        switch latest {
        case .active(let epoch):
            if let sender, sender.leaderEpoch == epoch { return }
            if sender != nil { standDown(node: node, why: "elected again with a new epoch") }
            takeOver(epoch: epoch, node: node, router: router, publisher: publisher)
        case .standby(let leader):
            if sender != nil { standDown(node: node, why: "the lease may have expired") }
            follow(leader, node: node)
        }
    }

    private func takeOver(epoch: UInt64, node: CollectorNode, router: ZMQSocket, publisher: ZMQSocket) {
        let now = Clock.now()
        let peers = node.core.standbyPeerIdentities(at: now.monotonicNs)
        var core = CollectorCore(limits: limits, tracking: tracking)
        core.publishEndpoint = node.core.publishEndpoint
        core.shard = node.core.shard
        core.startReplicating(leaderEpoch: epoch)
        let resumes = replica.resumes
        core.restore(resumes, closed: replica.closedKeys, at: now)
        core.announcement = .init(role: .active, leaderEpoch: epoch, activeEndpoint: own.control)
        node.core = core
        var republished = 0
        for bytes in replica.replayPublications {
            guard let message = try? StreamMessage(serializedBytes: bytes) else { continue }
            node.publish(message, bytes: Array(bytes), on: publisher)
            republished += 1
        }
        node.carryOut(node.core.announceTakeover(to: peers), router: router, publisher: publisher)
        node.counters.add("failover_takeovers")
        node.counters.add("failover_republished", UInt64(republished))
        if following != nil && !replica.isCurrent {
            // It had an active to follow but not its latest state (the active died before a snapshot arrived, or
            // after a gap): streams go on from what it has, and their numbering may repeat (tails keep the first).
            node.counters.add("failover_replica_not_current")
            logger.warning("took over without a current copy of the active's state", metadata: [
                "epoch": "\(epoch)", "streams": "\(resumes.count)", "step": "\(replica.applied)",
            ])
        }
        logger.notice("active: publishing", metadata: [
            "epoch": "\(epoch)", "streams_resumed": "\(resumes.count)", "republished": "\(republished)",
            "replica_step": "\(replica.applied)",
        ])
        sender = ReplicationSender(
            leaderEpoch: epoch, settings: .init(ackTimeout: UInt64(max(1, settings.ackTimeoutMilliseconds)) * 1_000_000))
        dealer?.close()
        dealer = nil
        following = nil
        replica = Self.freshReplica(limits: limits, tracking: tracking)
    }

    private func standDown(node: CollectorNode, why: String) {
        let held = sender?.figures.heldSteps ?? 0
        node.counters.add("failover_stood_down")
        logger.warning("standing down: stopped publishing", metadata: ["why": "\(why)", "unpublished_steps": "\(held)"])
        sender = nil
        node.stepPublications.removeAll()
        var core = CollectorCore(limits: limits, tracking: tracking)
        core.publishEndpoint = node.core.publishEndpoint
        core.shard = node.core.shard
        core.announcement = .init(role: .standby)
        node.core = core
        replica = Self.freshReplica(limits: limits, tracking: tracking)
    }

    private func follow(_ leader: String?, node: CollectorNode) {
        let value = leader.flatMap(LeaderValue.init(parsing:))
        if leader != nil, value == nil {
            node.counters.add("election_leader_value_refused")
            logger.warning("the leader key's value is not a collector's: no active to follow", metadata: [
                "value": "\(String((leader ?? "").prefix(80)))",
            ])
        }
        node.core.announcement = .init(role: .standby, leaderEpoch: replica.leaderEpoch, activeEndpoint: value?.control ?? "")
        guard value != following else { return }
        dealer?.close()
        dealer = nil
        following = value
        guard let value, value != own else { return }
        do {
            let socket = try ZMQSocket(context: context, kind: .dealer)
            try socket.setMaxMessageSize(Self.maxReplicationMessageBytes)
            try socket.setHighWaterMarks(send: 1000, receive: 100_000)
            try socket.setLinger(milliseconds: 0)
            if let security { try socket.makeCurveClient(serverKey: security.keyPair.publicKey, keyPair: security.keyPair) }
            try socket.connect(value.replication)
            dealer = socket
            logger.info("standby: following the active", metadata: ["control": "\(value.control)", "replication": "\(value.replication)"])
        } catch {
            node.counters.add("replication_connect_failed")
            logger.error("standby: cannot connect to the active's replication endpoint", metadata: [
                "endpoint": "\(value.replication)", "error": "\(error)",
            ])
        }
    }

    // MARK: - Steps and messages

    /// Hands the core's step (its changed streams and what it published) to replication.
    func step(node: CollectorNode, publisher: ZMQSocket) {
        guard var sender else { return }
        let checkpoints = node.core.takeCheckpoints()
        let publications = node.stepPublications.map {
            ReplicationSender.Publication(message: $0, bytes: (try? $0.serializedBytes()) ?? [])
        }
        let out = sender.step(checkpoints: checkpoints, publications: publications, at: Clock.monotonicNanoseconds())
        self.sender = sender
        carryOut(out, node: node, publisher: publisher)
    }

    /// Reads what waits on the replication sockets.
    func receive(node: CollectorNode, publisher: ZMQSocket) throws {
        var budget = 1000
        while budget > 0, let message = try replicationRouter.receiveMessage(dontWait: true) {
            budget -= 1
            guard message.parts.count == 2, case .ack(let ack)? = Self.decode(message.parts[1])?.body else {
                node.counters.add("replication_malformed")
                continue
            }
            guard var sender else {
                node.counters.add("replication_ack_not_active")
                continue
            }
            let out = sender.acknowledged(ack, from: message.parts[0], at: Clock.monotonicNanoseconds()) { node.core.snapshot() }
            self.sender = sender
            carryOut(out, node: node, publisher: publisher)
        }
        budget = 1000
        while budget > 0, let dealer, let parts = try dealer.receive(dontWait: true) {
            budget -= 1
            guard parts.count == 1, case .replication(let replication)? = Self.decode(parts[0])?.body else {
                node.counters.add("replication_malformed")
                continue
            }
            carryOut(replica.receive(replication, at: Clock.monotonicNanoseconds()), node: node)
        }
    }

    /// A replication message of protocol version 1; nil for anything else (counted by the caller as malformed).
    static func decode(_ bytes: [UInt8]) -> ReplicationMessage? {
        guard let message = try? ReplicationMessage(serializedBytes: bytes), message.version == Wire.version else { return nil }
        return message
    }

    /// Lets time pass on both sides.
    func tick(node: CollectorNode, publisher: ZMQSocket) {
        let now = Clock.monotonicNanoseconds()
        let lacksState = following != nil && !replica.isCurrent
        if role.lacksState != lacksState { role.lacksState = lacksState }
        if var sender {
            let out = sender.tick(at: now)
            self.sender = sender
            carryOut(out, node: node, publisher: publisher)
        }
        if dealer != nil {
            carryOut(replica.tick(at: now), node: node)
            if node.core.announcement.leaderEpoch != replica.leaderEpoch {
                node.core.announcement.leaderEpoch = replica.leaderEpoch
            }
        }
    }

    private func carryOut(_ output: ReplicationSender.Output, node: CollectorNode, publisher: ZMQSocket) {
        node.counters.add(output.counts)
        logger.write(output.logs)
        for action in output.actions {
            switch action {
            case .publish(let list):
                for publication in list { node.publish(publication.message, bytes: publication.bytes, on: publisher) }
            case .send(let identities, let replication):
                var message = ReplicationMessage()
                message.version = Wire.version
                message.replication = replication
                guard let bytes: [UInt8] = try? message.serializedBytes() else { continue }
                for identity in identities {
                    do {
                        if try !replicationRouter.send([identity, bytes], dontWait: true) { node.counters.add("replication_send_dropped") }
                    } catch {
                        // EHOSTUNREACH: the standby is gone.
                        guard var sender else { continue }
                        let out = sender.unreachable(identity)
                        self.sender = sender
                        carryOut(out, node: node, publisher: publisher)
                    }
                }
            }
        }
    }

    private func carryOut(_ output: ReplicaState.Output, node: CollectorNode) {
        node.counters.add(output.counts)
        logger.write(output.logs)
        for case .ack(let epoch, let number) in output.actions {
            var message = ReplicationMessage()
            message.version = Wire.version
            message.ack.leaderEpoch = epoch
            message.ack.number = number
            message.ack.nodeID = settings.nodeID
            guard let dealer, let bytes: [UInt8] = try? message.serializedBytes() else { continue }
            if (try? dealer.send([bytes], dontWait: true)) != true { node.counters.add("replication_ack_dropped") }
        }
    }
}
