import Foundation

/// Streams spread over several collectors, each a **shard** that owns a share of the streams (SPEC.md 19). Pure, and
/// specified so that any node computes the same owner: rendezvous (highest random weight) hashing, so adding shard N
/// moves only the streams shard N now owns (about 1/(N+1) of them) and removing one moves only its own.
///
/// `--collector` lists the shards separated by `;`, each a failover group of `,`-separated endpoints (SPEC.md 18):
/// `tcp://a:5556,tcp://a2:5556;tcp://b:5556`. One group is the unsharded cluster of before: every stream is its.
public struct ShardMap: Sendable, Equatable {
    /// The most shards a list may name (every client keeps a connection to each endpoint of its own shard, and tails
    /// to every endpoint of every shard).
    public static let maxShards = 64

    /// Each shard's endpoints, in the order listed.
    public let groups: [[String]]

    public struct InvalidList: Error, CustomStringConvertible {
        public let description: String
    }

    /// Parses `--collector`: shards separated by `;`, endpoints within one by `,` (blanks and empty parts ignored).
    /// - Throws: ``InvalidList`` when no endpoint is given, an endpoint appears in two shards, or there are more than
    ///   ``maxShards`` shards.
    public init(parsing list: String) throws {
        let groups = list.split(separator: ";").map { CollectorChoice.endpoints(String($0)) }.filter { !$0.isEmpty }
        guard !groups.isEmpty else { throw InvalidList(description: "no collector endpoint in \"\(list)\"") }
        guard groups.count <= Self.maxShards else {
            throw InvalidList(description: "\(groups.count) shards listed; at most \(Self.maxShards)")
        }
        let all = groups.flatMap { $0 }
        guard Set(all).count == all.count else {
            throw InvalidList(description: "an endpoint is listed in two shards: \"\(list)\"")
        }
        self.groups = groups
    }

    /// How many shards.
    public var count: Int { groups.count }

    /// The index of the shard that owns `stream`.
    public func shard(of stream: String) -> Int { Self.owner(of: stream, shards: groups.count) }

    /// The endpoints of shard `index`, comma-separated (a ``CollectorSession``'s `collector`).
    public func endpoints(ofShard index: Int) -> String { groups[index].joined(separator: ",") }

    /// Every endpoint of every shard, comma-separated: what a tail or view follows (it subscribes to them all).
    public var allEndpoints: String { groups.flatMap { $0 }.joined(separator: ",") }

    /// Every endpoint of every shard, comma-separated, for a `--collector` value that may list shards: the value itself
    /// when it does not parse (the session reports the bad endpoint).
    public static func flattened(_ list: String) -> String {
        (try? ShardMap(parsing: list))?.allEndpoints ?? list
    }

    /// The shard among `0..<shards` that owns `stream`: the index k with the highest
    /// `mix(fnv1a64(stream) ^ (k × 0x9E3779B97F4A7C15))`, ties to the lower k (SPEC.md 19.1). 0 when `shards` ≤ 1.
    public static func owner(of stream: String, shards: Int) -> Int {
        guard shards > 1 else { return 0 }
        let hash = fnv1a64(stream)
        var best = 0
        var bestWeight = weight(hash, shard: 0)
        for k in 1..<shards {
            let w = weight(hash, shard: k)
            if w > bestWeight {
                best = k
                bestWeight = w
            }
        }
        return best
    }

    /// The shard a worker's detection thread `thread` serves: `(thread + fnv1a64(worker) mod shards) mod shards`. Threads
    /// of one worker go round the shards in turn, and each worker starts at a shard of its own, so workers with fewer
    /// threads than shards still cover them all between them.
    public static func shard(ofThread thread: Int, worker: String, shards: Int) -> Int {
        guard shards > 1 else { return 0 }
        let offset = Int(fnv1a64(worker) % UInt64(shards))
        return (thread % shards + offset) % shards
    }

    /// Shard `k`'s weight for a stream whose FNV-1a hash is `hash`.
    static func weight(_ hash: UInt64, shard k: Int) -> UInt64 {
        mix(hash ^ (UInt64(k) &* 0x9E37_79B9_7F4A_7C15))
    }

    /// 64-bit FNV-1a of the UTF-8 bytes.
    static func fnv1a64(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// SplitMix64's finaliser: every input bit reaches every output bit.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Which shard a collector is (`--shard K/N`), as its Welcome says (SPEC.md 19).
public struct ShardIdentity: Sendable, Equatable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    /// - Throws: ``ShardMap/InvalidList`` unless 0 ≤ index < count ≤ ``ShardMap/maxShards``.
    public init(index: Int, count: Int) throws {
        guard (1...ShardMap.maxShards).contains(count), (0..<count).contains(index) else {
            throw ShardMap.InvalidList(description: "a shard is K/N with 0 ≤ K < N ≤ \(ShardMap.maxShards), not \(index)/\(count)")
        }
        self.index = index
        self.count = count
    }

    /// Parses `K/N`.
    public init(parsing text: String) throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw ShardMap.InvalidList(description: "a shard is K/N (e.g. 0/4), not \"\(text)\"")
        }
        try self.init(index: index, count: count)
    }

    /// Whether this shard owns `stream`.
    public func owns(_ stream: String) -> Bool { ShardMap.owner(of: stream, shards: count) == index }

    public var description: String { "\(index)/\(count)" }

    /// What is wrong, if anything, when a collector's Welcome says it is shard `said` of `saidCount` (0: not sharded)
    /// to a client that listed it as shard `listed` of `listedCount`: nil when they agree (or the collector does not
    /// say, as a collector of before does not).
    public static func mismatch(said: UInt32, of saidCount: UInt32, listed: Int, of listedCount: Int) -> String? {
        guard saidCount > 0 else { return nil }
        guard Int(saidCount) == listedCount, Int(said) == listed else {
            return "the collector says it is shard \(said)/\(saidCount); this node's --collector lists it as \(listed)/\(listedCount)"
        }
        return nil
    }
}

/// A client's check that the collectors it talks to are the shard it listed them as (SPEC.md 19.2): the lists of
/// `--collector` must be the same, in the same order, on every node, or streams go to shards that do not own them.
public struct ShardCheck: Sendable {
    public let listed: Int
    public let count: Int
    private var last: String?

    /// A mismatch: what is wrong, and whether it differs from the last one found (log it then; count every one).
    public struct Mismatch: Sendable, Equatable {
        public let description: String
        public let isNew: Bool
        /// ``description`` the first time, nil when it repeats.
        public var newly: String? { isNew ? description : nil }
    }

    /// A client that lists its collectors as shard `listed` of `count`.
    public init(listed: Int, of count: Int) {
        self.listed = listed
        self.count = count
    }

    /// Checks a Welcome: nil when it agrees (or does not say: an unsharded collector of before).
    public mutating func check(_ welcome: Welcome) -> Mismatch? {
        guard let found = ShardIdentity.mismatch(said: welcome.shard, of: welcome.shardCount, listed: listed, of: count) else {
            last = nil
            return nil
        }
        defer { last = found }
        return Mismatch(description: found, isNew: found != last)
    }
}
