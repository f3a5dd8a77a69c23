import Testing
@testable import FacewireProtocol

/// Streams spread over shards (SPEC.md 19): the owner function, the `--collector` list, a worker's threads, and a
/// client's check of what each collector says it is.
@Suite("ShardMap")
struct ShardMapTests {
    @Test("shards split on ';', a failover group's endpoints on ','")
    func parsesShardsAndGroups() throws {
        let map = try ShardMap(parsing: " tcp://a:1 , tcp://a2:1 ;tcp://b:1;; ")
        #expect(map.groups == [["tcp://a:1", "tcp://a2:1"], ["tcp://b:1"]])
        #expect(map.count == 2)
        #expect(map.endpoints(ofShard: 0) == "tcp://a:1,tcp://a2:1")
        #expect(map.allEndpoints == "tcp://a:1,tcp://a2:1,tcp://b:1")
        #expect(try ShardMap(parsing: "tcp://a:1").groups == [["tcp://a:1"]])
        #expect(ShardMap.flattened("tcp://a:1;tcp://b:1,tcp://c:1") == "tcp://a:1,tcp://b:1,tcp://c:1")
    }

    @Test("no endpoint, an endpoint in two shards, or too many shards are refused")
    func refusesBadLists() {
        #expect(throws: ShardMap.InvalidList.self) { try ShardMap(parsing: " ; , ") }
        #expect(throws: ShardMap.InvalidList.self) { try ShardMap(parsing: "tcp://a:1;tcp://b:1,tcp://a:1") }
        let many = (0...ShardMap.maxShards).map { "tcp://h\($0):1" }.joined(separator: ";")
        #expect(throws: ShardMap.InvalidList.self) { try ShardMap(parsing: many) }
        #expect(ShardMap.flattened(" ; ") == " ; ")
    }

    /// The owners an independent implementation computed (Python, from SPEC.md 19.1's text): any node must agree.
    @Test("owners agree with an independent implementation of SPEC 19.1", arguments: [
        ("lobby", [1, 1, 3, 7]), ("door-1", [1, 1, 1, 1]), ("cam-042", [1, 1, 3, 6]),
        ("load-00000", [0, 2, 2, 2]), ("load-00001", [1, 1, 3, 5]), ("a", [1, 1, 3, 6]),
    ])
    func ownersMatchTheSpecification(stream: String, owners: [Int]) {
        #expect([2, 3, 4, 8].map { ShardMap.owner(of: stream, shards: $0) } == owners)
        #expect(ShardMap.owner(of: stream, shards: 1) == 0)
        #expect(ShardMap.owner(of: stream, shards: 0) == 0)
    }

    @Test("FNV-1a 64 of the reference strings")
    func fnvMatchesItsReference() {
        #expect(ShardMap.fnv1a64("") == 0xCBF2_9CE4_8422_2325)
        #expect(ShardMap.fnv1a64("a") == 0xAF63_DC4C_8601_EC8C)
        #expect(ShardMap.fnv1a64("foobar") == 0x8594_4171_F739_67E8)
    }

    static let ids = (0..<10_000).map { "camera-\($0)" }

    @Test("10,000 streams spread as evenly as chance would: each share within 4 standard deviations", arguments: [2, 3, 4, 7, 16])
    func spreadsEvenly(shards: Int) {
        var counts = [Int](repeating: 0, count: shards)
        for id in Self.ids { counts[ShardMap.owner(of: id, shards: shards)] += 1 }
        let n = Double(Self.ids.count)
        let p = 1 / Double(shards)
        let even = n * p
        // A binomial share's standard deviation; at 4 shards 43 streams of 2,500 (1.7 %).
        let sigma = (n * p * (1 - p)).squareRoot()
        for count in counts { #expect(abs(Double(count) - even) <= 4 * sigma, "\(counts)") }
    }

    @Test("adding a shard moves only the streams it now owns, about 1/(N+1)", arguments: [1, 2, 3, 4, 8])
    func addingAShardMovesOnlyItsOwn(shards: Int) {
        var moved = 0
        for id in Self.ids {
            let before = ShardMap.owner(of: id, shards: shards)
            let after = ShardMap.owner(of: id, shards: shards + 1)
            #expect(after == before || after == shards, "\(id) moved from \(before) to \(after)")
            if after != before { moved += 1 }
        }
        let expected = Double(Self.ids.count) / Double(shards + 1)
        #expect(abs(Double(moved) - expected) <= 0.08 * expected, "\(moved) moved, about \(expected) expected")
    }

    @Test("a worker's threads go round the shards; workers start at different shards")
    func threadsGoRoundTheShards() {
        for worker in ["host-a:1", "host-b:2", "gpu:77"] {
            let served = (0..<8).map { ShardMap.shard(ofThread: $0, worker: worker, shards: 4) }
            for k in 0..<4 { #expect(served.filter { $0 == k }.count == 2, "\(worker): \(served)") }
            #expect(ShardMap.shard(ofThread: 5, worker: worker, shards: 1) == 0)
        }
        // 64 one-thread workers cover 4 shards, none with less than half an even share.
        var counts = [0, 0, 0, 0]
        for index in 0..<64 { counts[ShardMap.shard(ofThread: 0, worker: "host:\(1000 + index)", shards: 4)] += 1 }
        #expect(counts.allSatisfy { $0 >= 8 }, "\(counts)")
    }

    @Test("K/N parses only with 0 ≤ K < N ≤ 64")
    func parsesShardIdentity() throws {
        let shard = try ShardIdentity(parsing: "2/4")
        #expect(shard.index == 2 && shard.count == 4 && shard.description == "2/4")
        #expect(shard.owns("lobby") == false && shard.owns("load-00000"))
        for bad in ["4/4", "-1/4", "1/0", "a/b", "1/65", "1", "1/2/3", "/4", ""] {
            #expect(throws: ShardMap.InvalidList.self, "\(bad)") { try ShardIdentity(parsing: bad) }
        }
    }

    @Test("a client notices a collector that is not the shard it listed, once per kind of mistake")
    func checksWhatCollectorsSay() {
        var check = ShardCheck(listed: 1, of: 4)
        var welcome = Welcome()
        // A collector of before, or an unsharded one: says nothing.
        #expect(check.check(welcome) == nil)
        welcome.shard = 1
        welcome.shardCount = 4
        #expect(check.check(welcome) == nil)
        welcome.shard = 2
        let first = check.check(welcome)
        #expect(first?.isNew == true && first?.newly?.contains("2/4") == true)
        #expect(check.check(welcome)?.newly == nil)
        welcome.shardCount = 3
        #expect(check.check(welcome)?.isNew == true)
        // An unsharded client (one group) talking to a shard: every stream of it goes there.
        var single = ShardCheck(listed: 0, of: 1)
        #expect(single.check(welcome) != nil)
    }
}
