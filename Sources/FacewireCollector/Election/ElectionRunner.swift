import FacewireCollectorCore
import FacewireRuntime
import FacewireVocabulary
import Logging
import ServiceLifecycle

/// Runs a collector's ``LeaderElection`` against etcd (``EtcdGateway``): feeds it the answers and the time, carries out
/// its requests as tasks of their own, and hands every role change to `onRole`. Async on Swift's pool: it waits only on
/// the network, never on a blocking C call.
///
/// A graceful shutdown (SIGTERM) stands the collector down and revokes its lease, so that a standby takes over at once;
/// a cancellation or a crash leaves the lease to expire (the standby then takes over after its time to live).
public struct ElectionRunner: Service {
    public let gateway: EtcdGateway
    public let settings: LeaderElection.Settings
    let counters: Counters
    let logger: Logger
    let onRole: @Sendable (LeaderElection.Role) -> Void
    /// How often the election is handed the time.
    let tickNs: UInt64
    /// Whether the collector follows an active whose state it lacks (``LeaderElection/lacksState``).
    let lacksState: @Sendable () -> Bool
    /// A shard's check before it campaigns (SPEC.md 19): the group's number of shards, kept in etcd. Nil: none.
    public var shards: ShardCount?

    /// The number of shards a sharded group keeps in etcd (`facewire/<group>/shards`): the first collector writes it,
    /// every other one compares. A collector started with another number (a list changed on one host only) never
    /// campaigns, so it cannot publish streams its peers think are another shard's; it logs why and stays a standby.
    /// Changing the number: `etcdctl put facewire/<group>/shards N`, then restart every node with the new list.
    public struct ShardCount: Sendable {
        public let key: String
        public let count: Int

        public init(group: String, count: Int) {
            key = "facewire/\(group)/shards"
            self.count = count
        }

        /// What is wrong with what etcd holds, nil when it agrees. The value is hostile: only a decimal count is read,
        /// and at most 20 octets of anything else are quoted.
        public func problem(withStored value: String) -> String? {
            guard Int(value) != count else { return nil }
            return "etcd's \(key) says \(value.prefix(20).debugDescription) shards; this collector was started as one of \(count): "
                + "it stands by and never campaigns (restart it with the group's --shard K/N, or change the key and restart every node)"
        }
    }

    public init(
        gateway: EtcdGateway, settings: LeaderElection.Settings, counters: Counters, logger: Logger, tickMilliseconds: UInt64 = 20,
        lacksState: @escaping @Sendable () -> Bool = { false }, onRole: @escaping @Sendable (LeaderElection.Role) -> Void
    ) {
        self.lacksState = lacksState
        self.gateway = gateway
        self.settings = settings
        self.counters = counters
        self.logger = logger
        self.tickNs = tickMilliseconds * 1_000_000
        self.onRole = onRole
    }

    /// What reaches the election: an answer (applied to it), the time, or the stop.
    enum Input: Sendable {
        case answer(@Sendable (inout LeaderElection, Instant) -> LeaderElection.Output)
        case tick
        case stop
    }

    public func run() async throws {
        let (inputs, continuation) = AsyncStream<Input>.makeStream()
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: tickNs)
                continuation.yield(.tick)
            }
        }
        defer { ticker.cancel() }
        var election = LeaderElection(settings: settings)
        var watch: Task<Void, Never>?
        /// The latest revocation: the one a stop makes is awaited before the process goes (an earlier one is done or
        /// moot by then; keeping every one would grow with each stand-down).
        var revocation: Task<Void, Never>?
        let gateway = gateway

        func carryOut(_ output: LeaderElection.Output) {
            counters.add(output.counts)
            logger.write(output.logs)
            for action in output.actions {
                let sent = Clock.monotonicNanoseconds()
                switch action {
                case .grantLease(let ttl):
                    Task {
                        do {
                            let (id, granted) = try await gateway.grant(ttlSeconds: ttl)
                            continuation.yield(.answer { $0.leaseGranted(id: id, ttlSeconds: granted, sentAtNs: sent, at: $1) })
                        } catch {
                            continuation.yield(.answer { $0.failed(.grant, at: $1) })
                        }
                    }
                case .renew(let lease):
                    Task {
                        do {
                            let ttl = try await gateway.renew(lease: lease)
                            continuation.yield(.answer { $0.renewed(lease: lease, ttlSeconds: ttl, sentAtNs: sent, at: $1) })
                        } catch {
                            continuation.yield(.answer { $0.failed(.renew, at: $1) })
                        }
                    }
                case .acquire(let lease, let value):
                    Task {
                        do {
                            switch try await gateway.acquire(lease: lease, value: value) {
                            case .acquired(let revision):
                                continuation.yield(.answer { $0.acquired(revision: revision, lease: lease, at: $1) })
                            case .held(let holder, let revision, let holderLease):
                                continuation.yield(.answer { $0.heldBy(value: holder, createRevision: revision, lease: holderLease, at: $1) })
                            }
                        } catch {
                            continuation.yield(.answer { $0.failed(.acquire, at: $1) })
                        }
                    }
                case .watch(let revision):
                    watch?.cancel()
                    watch = Task {
                        do {
                            try await gateway.waitForDeletion(afterRevision: revision)
                            continuation.yield(.answer { [lacksState] in
                                $0.lacksState = lacksState()
                                return $0.leaderKeyDeleted(at: $1)
                            })
                        } catch {
                            if !Task.isCancelled { continuation.yield(.answer { $0.failed(.watch, at: $1) }) }
                        }
                    }
                case .stopWatching:
                    watch?.cancel()
                    watch = nil
                case .revoke(let lease):
                    revocation = Task { try? await gateway.revoke(lease: lease) }
                case .becomeActive(let epoch):
                    onRole(.active(epoch: epoch))
                case .becomeStandby(let leader):
                    onRole(.standby(leader: leader))
                }
            }
        }

        onRole(election.role)
        if let shards {
            // Before campaigning: the group's number of shards, written by the first collector, the same for all.
            var attempts = 0
            check: while !Task.isShuttingDownGracefully {
                do {
                    let problem: String?
                    switch try await gateway.putIfAbsent(key: shards.key, value: String(shards.count)) {
                    case .acquired:
                        logger.notice("wrote the group's number of shards to etcd", metadata: ["key": "\(shards.key)", "shards": "\(shards.count)"])
                        problem = nil
                    case .held(let value, _, _):
                        problem = shards.problem(withStored: value)
                    }
                    if let problem {
                        counters.add("election_shards_mismatch")
                        logger.error("\(problem)")
                        try? await gracefulShutdown()
                        return
                    }
                    break check
                } catch {
                    attempts += 1
                    counters.add("election_shards_check_failed")
                    if attempts % 20 == 1 { logger.warning("cannot read the group's number of shards from etcd yet; trying again", metadata: ["error": "\(error)"]) }
                    try? await Task.sleep(nanoseconds: 250_000_000)
                }
            }
        }
        carryOut(election.start(at: Clock.now()))
        await withGracefulShutdownHandler {
            for await input in inputs {
                switch input {
                case .answer(let apply): carryOut(apply(&election, Clock.now()))
                case .tick: carryOut(election.tick(at: Clock.now()))
                case .stop:
                    carryOut(election.stop(at: Clock.now()))
                    continuation.finish()
                }
            }
        } onGracefulShutdown: {
            continuation.yield(.stop)
        }
        watch?.cancel()
        // The lease revoked before the process goes (each request within the gateway's timeout).
        await revocation?.value
    }
}
