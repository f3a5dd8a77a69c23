import AsyncHTTPClient
import FacewireCollectorCore
import FacewireRuntime
import FacewireTesting
import Foundation
import Logging
import ServiceLifecycle
import Testing

@testable import FacewireCollector

/// Every role change of several runners, in the order they happened (one process, one clock).
final class RoleLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(runner: Int, role: LeaderElection.Role)] = []

    func record(_ runner: Int, _ role: LeaderElection.Role) {
        lock.withLock { entries.append((runner, role)) }
    }
    var all: [(runner: Int, role: LeaderElection.Role)] { lock.withLock { entries } }

    /// The runner active now (by the last change each announced), and how many are.
    var active: [Int] {
        var last: [Int: LeaderElection.Role] = [:]
        for entry in all { last[entry.runner] = entry.role }
        return last.filter { if case .active = $0.value { true } else { false } }.keys.sorted()
    }

    /// Waits until `condition` holds, at most `seconds` (a bound against hanging, not a timing check).
    /// Waits until `condition` holds, for `seconds` of this test's own turns: at least that long, and at least that many
    /// 20 ms polls. Swift Testing runs this beside CPU-bound tests that can hold every thread of the cooperative pool for
    /// minutes (a clean-clone CI run did); the runners then get no turn either, and a wall-clock deadline alone failed
    /// the test without the election having had a chance. Ten times `seconds` of wall clock at most.
    func wait(seconds: Double, until condition: () -> Bool) async -> Bool {
        let start = Date()
        let polls = Int(seconds / 0.02)
        var polled = 0
        while polled < polls || Date().timeIntervalSince(start) < seconds {
            if condition() { return true }
            if Date().timeIntervalSince(start) > seconds * 10 { break }
            try? await Task.sleep(nanoseconds: 20_000_000)
            polled += 1
        }
        return condition()
    }
}

@Suite("ElectionRunner: collectors elected through a real etcd", .serialized)
struct ElectionRunnerTests {
    func runner(_ index: Int, _ etcd: EtcdServer, _ log: RoleLog, key: String) -> ElectionRunner {
        var logger = Logger(label: "test.election.\(index)")
        logger.logLevel = .warning
        var settings = LeaderElection.Settings(value: "tcp://collector-\(index):5556")
        // Swift Testing runs this beside other tests on a cooperative pool of one thread per core, which a busy test can
        // hold for seconds: a 5 s lease keeps an active collector from standing down while its loop waits for a thread.
        settings.ttlSeconds = 5
        return ElectionRunner(
            gateway: EtcdGateway(base: etcd.base, key: key), settings: settings, counters: Counters(), logger: logger
        ) { log.record(index, $0) }
    }

    @Test("one of three is active; a graceful stop hands over at once, a cancelled (crashed) active's lease expires and another takes over, with a greater epoch each time; never two active")
    func handovers() async throws {
        guard EtcdServer.binary != nil else {
            print("skipped: etcd is not installed (scripts/setup.sh installs Debian's etcd-server)")
            return
        }
        let etcd = try EtcdServer()
        defer { etcd.stop() }
        try await etcd.ready()
        let log = RoleLog()
        let key = "facewire/test/leader"
        var tasks: [Int: Task<Void, any Error>] = [:]
        var groups: [Int: ServiceGroup] = [:]
        for index in 0..<3 {
            var logger = Logger(label: "test.group")
            logger.logLevel = .critical
            let group = ServiceGroup(
                configuration: ServiceGroupConfiguration(services: [.init(service: runner(index, etcd, log, key: key))], logger: logger))
            groups[index] = group
            tasks[index] = Task { try await group.run() }
        }
        defer { for task in tasks.values { task.cancel() } }
        // Each check: the number of active runners never exceeds one, after every change.
        func neverTwo() -> Bool {
            var last: [Int: LeaderElection.Role] = [:]
            for entry in log.all {
                last[entry.runner] = entry.role
                if last.values.filter({ if case .active = $0 { true } else { false } }).count > 1 { return false }
            }
            return true
        }
        func epochs() -> [UInt64] { log.all.compactMap { if case .active(let epoch) = $0.role { epoch } else { nil } } }

        #expect(await log.wait(seconds: 120) { log.active.count == 1 }, "one runner became active")
        let first = try #require(log.active.first)
        // Graceful stop (SIGTERM): the active revokes its lease; another is active.
        await groups[first]!.triggerGracefulShutdown()
        _ = try? await tasks[first]!.value
        #expect(await log.wait(seconds: 120) { log.active.count == 1 && log.active.first != first }, "another took over after the stop")
        let second = try #require(log.active.first)
        // A crash: the task is cancelled without the graceful path, its lease is left to expire.
        tasks[second]!.cancel()
        _ = try? await tasks[second]!.value
        log.record(second, .standby(leader: nil))  // a crashed collector publishes nothing more from here
        #expect(await log.wait(seconds: 120) { log.active.count == 1 && log.active.first != second && log.active.first != first },
                "the third took over once the crashed one's lease expired")
        #expect(neverTwo(), "never two active: \(log.all)")
        let announced = epochs()
        // At least one activation per handover (a starved runner may stand down and take over again), each with a greater epoch.
        #expect(announced.count >= 3 && zip(announced, announced.dropFirst()).allSatisfy { $0 < $1 }, "epochs grow: \(announced)")
    }

    @Test("a shard started with another number of shards than etcd holds never campaigns; one that agrees does")
    func shardCountInEtcd() async throws {
        guard EtcdServer.binary != nil else {
            print("skipped: etcd is not installed (scripts/setup.sh installs Debian's etcd-server)")
            return
        }
        let etcd = try EtcdServer()
        defer { etcd.stop() }
        try await etcd.ready()
        let log = RoleLog()
        var tasks: [Task<Void, any Error>] = []
        var groups: [ServiceGroup] = []
        // Shard 0 of 2 writes the count; shard 1 of 3 (a list changed on one host) finds 2; shard 1 of 2 agrees.
        for (index, count) in [(0, 2), (1, 3), (2, 2)] {
            var shard = runner(index, etcd, log, key: "facewire/test/shard-\(index)/leader")
            shard.shards = ElectionRunner.ShardCount(group: "test", count: count)
            var logger = Logger(label: "test.group")
            logger.logLevel = .critical
            let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [.init(service: shard)], logger: logger))
            groups.append(group)
            tasks.append(Task { try await group.run() })
            // In order: the first writes the key before the others read it.
            _ = await log.wait(seconds: 20) { log.active.contains(index) || index == 1 }
        }
        #expect(await log.wait(seconds: 20) { log.active == [0, 2] }, "\(log.all)")
        // The mismatched one stays a standby (its own key is free: it would have won it).
        try? await Task.sleep(nanoseconds: 1_500_000_000)
        #expect(!log.active.contains(1), "\(log.all)")
        for group in groups { await group.triggerGracefulShutdown() }
        for task in tasks { _ = try? await task.value }
        let problem = ElectionRunner.ShardCount(group: "g", count: 4).problem(withStored: String(repeating: "9", count: 500))
        #expect(problem?.contains("facewire/g/shards") == true && (problem?.count ?? 0) < 400, "quoted at most 20 octets")
        #expect(ElectionRunner.ShardCount(group: "g", count: 4).problem(withStored: "4") == nil)
    }
}

@Suite("EtcdGateway: what etcd answers is checked")
struct EtcdGatewayParsingTests {
    @Test("numbers arrive as strings; anything but a 64-bit decimal is refused")
    func numbers() throws {
        #expect(try EtcdGateway.number("7587862346230000000", "ID") == 7_587_862_346_230_000_000)
        #expect(try EtcdGateway.number("-1", "TTL") == -1)
        for bad in ["", "1e3", "9223372036854775808", "0x10", " 1", String(repeating: "1", count: 10_000)] {
            #expect(throws: EtcdGateway.Malformed.self) { try EtcdGateway.number(bad, "revision") }
        }
    }

    @Test("watch lines: a created line or a progress note is no change, an event is, an error or a cancelled watch throws")
    func watchLines() throws {
        func ends(_ text: String) throws -> Bool { try EtcdGateway.watchLineEnds(Array(text.utf8)) }
        #expect(try ends(#"{"result":{"header":{"revision":"2"},"created":true}}"#) == false)
        #expect(try ends(#"{"result":{"header":{"revision":"9"}}}"#) == false)
        #expect(try ends(#"{"result":{"events":[{"type":"DELETE","kv":{"key":"eA==","mod_revision":"3"}}]}}"#))
        #expect(try ends(#"{"result":{"events":[{"kv":{"key":"eA==","create_revision":"4"}}]}}"#), "a put (no type field)")
        #expect(try ends("") == false)
        #expect(throws: EtcdGateway.GatewayError.self) {
            try ends(#"{"error":{"grpc_code":14,"http_code":503,"message":"no leader","http_status":"Service Unavailable"}}"#)
        }
        #expect(throws: EtcdGateway.Malformed.self) { try ends(#"{"result":{"canceled":true,"compact_revision":"5"}}"#) }
        #expect(throws: EtcdGateway.Malformed.self) { try ends(#"{"neither":1}"#) }
        #expect(throws: (any Error).self) { try ends("{not json") }
        #expect(throws: (any Error).self) { try ends(#"{"result":{"events":"many"}}"#) }
    }
}
