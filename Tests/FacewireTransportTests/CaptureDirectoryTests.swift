import FacewireProtocol
import Testing
import FacewireTransport

/// ``CaptureDirectory`` driven with an injected clock: bounded, validated, pruned.
@Suite("Capture directory: bounded, validated, pruned")
struct CaptureDirectoryTests {
    static let second: UInt64 = 1_000_000_000
    static let key = String(repeating: "a", count: 39) + "#"

    static func listed(_ endpoints: [String], key: String? = nil) -> [(endpoint: String, key: String?)] {
        endpoints.map { ($0, key) }
    }

    @Test("valid endpoints and keys are accepted; the rest are rejected by name")
    func validation() {
        #expect(CaptureDirectory.isValidEndpoint("tcp://127.0.0.1:5555"))
        #expect(CaptureDirectory.isValidEndpoint("tcp://[::1]:1"))
        #expect(CaptureDirectory.isValidEndpoint("tcp://capture-host.example:65535"))
        #expect(CaptureDirectory.isValidEndpoint("ipc:///tmp/facewire.sock"))
        for bad in [
            "", "tcp://", "tcp://host", "tcp://host:", "tcp://:5555", "tcp://host:0", "tcp://host:65536", "tcp://host:-1",
            "tcp://host:99999999999999999999", "tcp://host:+5", "udp://host:5555", "inproc://x", "ipc://", "tcp://ho st:1",
            "tcp://host:1\n", "tcp://hóst:1", "tcp://" + String(repeating: "h", count: 250) + ":5555",
        ] {
            #expect(!CaptureDirectory.isValidEndpoint(bad), "\(bad.debugDescription)")
        }
        #expect(CaptureDirectory.isValidEndpoint("tcp://" + String(repeating: "h", count: 244) + ":5555"), "256 bytes")
        #expect(CaptureDirectory.isValidKey(Self.key))
        #expect(!CaptureDirectory.isValidKey(String(Self.key.dropLast())))
        #expect(!CaptureDirectory.isValidKey(Self.key + "a"))
        #expect(!CaptureDirectory.isValidKey(String(repeating: "a", count: 39) + "\""))
        #expect(!CaptureDirectory.isValidKey(String(repeating: "a", count: 39) + "é"))

        let directory = CaptureDirectory([])
        let update = directory.learn(
            [("tcp://ok:1", nil), ("udp://x:1", nil), ("tcp://ok:2", "short"), ("tcp://ok:3", Self.key), ("tcp://ok:4", "")], at: 0)
        #expect(update.added.map(\.endpoint) == ["tcp://ok:1", "tcp://ok:3", "tcp://ok:4"])
        #expect(update.added[2].key == nil, "an empty key means none")
        #expect(update.counters == ["captures_rejected_endpoint", "captures_rejected_key"])
    }

    @Test("with CURVE on, an announced entry without a key is rejected")
    func curveNeedsKey() {
        let directory = CaptureDirectory([], requiresKey: true)
        let update = directory.learn([("tcp://a:1", nil), ("tcp://a:2", Self.key)], at: 0)
        #expect(update.added.map(\.endpoint) == ["tcp://a:2"])
        #expect(update.counters == ["captures_rejected_key"])
    }

    @Test("at most maxEntries announced entries; more are refused and counted; static ones do not count")
    func cap() {
        let directory = CaptureDirectory(["tcp://static:1"], maxEntries: 3)
        let update = directory.learn(Self.listed((1...10).map { "tcp://c:\($0)" }), at: 0)
        #expect(update.added.count == 3)
        #expect(update.counters == Array(repeating: "captures_refused_cap", count: 7))
        #expect(directory.count == 4)
        #expect(directory.snapshotWithEpochs().entries.first?.entry.endpoint == "tcp://static:1")
        // Listing the held ones again changes nothing.
        let again = directory.learn(Self.listed((1...3).map { "tcp://c:\($0)" }), at: Self.second)
        #expect(again == CaptureDirectory.Update())
        // A million distinct endpoints cost no more than the cap.
        for batch in 0..<100 {
            _ = directory.learn(Self.listed((0..<100).map { "tcp://flood\(batch):\($0 + 1)" }), at: 2 * Self.second)
        }
        #expect(directory.count == 4)
        let zero = CaptureDirectory([], maxEntries: 0)
        #expect(zero.learn(Self.listed(["tcp://a:1"]), at: 0).counters == ["captures_refused_cap"])
    }

    @Test("an entry no Welcome lists for 30 s is forgotten, and its slot freed; static ones stay")
    func pruning() {
        let directory = CaptureDirectory(["tcp://static:1"], maxEntries: 2)
        _ = directory.learn(Self.listed(["tcp://a:1", "tcp://b:1"]), at: 0)
        let generation = directory.currentGeneration
        // b keeps being listed, a does not.
        for second in stride(from: UInt64(1), through: 29, by: 1) {
            let update = directory.learn(Self.listed(["tcp://b:1"]), at: second * Self.second)
            #expect(update.forgotten.isEmpty)
        }
        #expect(directory.learn(Self.listed(["tcp://c:1"]), at: 29 * Self.second).counters == ["captures_refused_cap"])
        #expect(directory.currentGeneration == generation)
        let update = directory.learn(Self.listed(["tcp://b:1", "tcp://c:1"]), at: 30 * Self.second)
        #expect(update.forgotten.map(\.endpoint) == ["tcp://a:1"])
        #expect(update.added.map(\.endpoint) == ["tcp://c:1"], "the freed slot is taken")
        #expect(directory.currentGeneration != generation)
        #expect(directory.snapshotWithEpochs().entries.map(\.entry.endpoint) == ["tcp://static:1", "tcp://b:1", "tcp://c:1"])
        // An empty Welcome still prunes; without Welcomes nothing is forgotten (a worker cut off keeps its nodes).
        #expect(directory.learn([], at: 100 * Self.second).forgotten.count == 2)
        #expect(directory.snapshotWithEpochs().entries.map(\.entry.endpoint) == ["tcp://static:1"])
    }

    @Test("a new key at the same endpoint is a new entry; the old one ages out")
    func rekeyed() {
        let other = String(repeating: "b", count: 40)
        let directory = CaptureDirectory([])
        _ = directory.learn([("tcp://a:1", Self.key)], at: 0)
        let update = directory.learn([("tcp://a:1", other)], at: 31 * Self.second)
        #expect(update.added == [CaptureDirectory.Entry(endpoint: "tcp://a:1", key: other)])
        #expect(update.forgotten == [CaptureDirectory.Entry(endpoint: "tcp://a:1", key: Self.key)])
    }

    @Test("time going backwards forgets nothing")
    func backwards() {
        let directory = CaptureDirectory([])
        _ = directory.learn(Self.listed(["tcp://a:1"]), at: 100 * Self.second)
        #expect(directory.learn([], at: 0).forgotten.isEmpty)
        #expect(directory.learn([], at: .max).forgotten.count == 1)
    }

    @Test("a node listed with a higher epoch is marked restarted and changes the generation; lower, equal or absurd epochs do not flap")
    func restartedNodes() {
        let directory = CaptureDirectory(["tcp://static:1"])
        let a = CaptureDirectory.Entry(endpoint: "tcp://a:1")
        _ = directory.learnWithEpochs([("tcp://a:1", nil, 100), ("tcp://b:1", nil, 7)], at: 0)
        #expect(directory.snapshotWithEpochs().entries.map(\.epoch) == [0, 100, 7], "static entries have no epoch")
        var generation = directory.currentGeneration

        // The old and the new incarnation both listed (the collector has not expired the old one yet): the higher wins.
        var update = directory.learnWithEpochs([("tcp://a:1", nil, 100), ("tcp://a:1", nil, 250), ("tcp://b:1", nil, 7)], at: Self.second)
        #expect(update.restarted == [a])
        #expect(update.added.isEmpty)
        #expect(directory.currentGeneration != generation)
        #expect(directory.snapshotWithEpochs().entries.first { $0.entry == a }?.epoch == 250)
        generation = directory.currentGeneration

        // Listed again in either order, or with a lower epoch: nothing changes, so threads do not attach again.
        for listing: [(endpoint: String, key: String?, epoch: UInt64)] in [
            [("tcp://a:1", nil, 250), ("tcp://a:1", nil, 100)], [("tcp://a:1", nil, 0)], [("tcp://a:1", nil, 249)],
        ] {
            update = directory.learnWithEpochs(listing + [("tcp://b:1", nil, 7)], at: 2 * Self.second)
            #expect(update.restarted.isEmpty)
        }
        #expect(directory.currentGeneration == generation)

        // An absurd epoch is only compared.
        update = directory.learnWithEpochs([("tcp://a:1", nil, .max), ("tcp://b:1", nil, 7)], at: 3 * Self.second)
        #expect(update.restarted == [a])
        #expect(directory.learnWithEpochs([("tcp://a:1", nil, .max)], at: 4 * Self.second).restarted.isEmpty)

        // A static entry listed by a Welcome stays the operator's: never marked restarted.
        #expect(directory.learnWithEpochs([("tcp://static:1", nil, 9)], at: 5 * Self.second).restarted.isEmpty)
        // A forgotten entry that comes back is added anew, not restarted.
        _ = directory.learn([], at: 100 * Self.second)
        update = directory.learnWithEpochs([("tcp://a:1", nil, 1)], at: 101 * Self.second)
        #expect(update.added == [a])
        #expect(update.restarted.isEmpty)
    }
}
