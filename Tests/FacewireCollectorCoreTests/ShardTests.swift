import Testing
@testable import FacewireCollectorCore
import FacewireProtocol

/// A collector that is one shard of several (SPEC.md 19).
@Suite("Shards at the collector")
struct ShardTests {
    static func welcomes(_ h: CoreHarness) -> [Welcome] {
        h.outputs.flatMap(\.replies).compactMap { if case .welcome(let welcome)? = $0.envelope.body { welcome } else { nil } }
    }

    @Test("every Welcome says which shard this is; an unsharded collector's says nothing (its bytes as before)")
    func welcomesSayTheShard() throws {
        var h = CoreHarness()
        h.core.shard = try ShardIdentity(parsing: "2/4")
        h.send(CoreHarness.hello("w", role: .worker), from: CoreHarness.worker)
        h.send(CoreHarness.hello("load-00000"))
        let said = Self.welcomes(h)
        // The capture node's answer too (without the capture list), so that it can check its list.
        #expect(said.count == 2 && said.allSatisfy { $0.shard == 2 && $0.shardCount == 4 })
        #expect(said.last?.captures.isEmpty == true)
        var plain = CoreHarness()
        plain.send(CoreHarness.hello("w", role: .worker), from: CoreHarness.worker)
        plain.send(CoreHarness.hello("load-00000"))
        // An unsharded single collector answers only the worker, as before.
        #expect(Self.welcomes(plain).count == 1 && Self.welcomes(plain).allSatisfy { $0.shard == 0 && $0.shardCount == 0 })
    }

    @Test("input for a stream another shard owns is taken whole, and counted by kind")
    func foreignStreamsAreTakenAndCounted() throws {
        var h = CoreHarness()
        h.core.shard = try ShardIdentity(parsing: "2/4")
        // "load-00000" is shard 2's; "lobby" shard 3's (ShardMapTests).
        for stream in ["load-00000", "lobby"] {
            h.send(CoreHarness.hello(stream))
            h.send(FailoverTests.result(stream, seq: 0, faces: [100]), from: CoreHarness.worker)
            h.send(CoreHarness.end(stream, nextSeq: 1))
        }
        #expect(h.total("shard_foreign_hello") == 1 && h.total("shard_foreign_result") == 1 && h.total("shard_foreign_end") == 1)
        #expect(h.notices("shard_foreign") >= 1)
        // Both streams are published whole: a misconfigured client loses nothing.
        for stream in ["load-00000", "lobby"] {
            #expect(h.frames(stream).map(\.seq) == [0] && h.summary(stream) != nil, "\(stream)")
        }
        // A worker's Idle names no stream: nothing to check.
        var idle = Idle()
        idle.worker = "w/t0"
        h.send(.idle(idle), from: CoreHarness.worker)
        #expect(h.total("shard_foreign_idle") == 0)
    }
}
