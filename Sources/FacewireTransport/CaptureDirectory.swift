import Foundation

/// The capture nodes a worker (or a live view) connects to, shared by its threads: bounded, validated and pruned.
///
/// The control thread feeds it every `Welcome` (``learnWithEpochs(_:at:)``); each detection thread keeps one socket
/// per entry and brings its socket set in line with ``snapshotWithEpochs()`` whenever the generation changes (ZeroMQ
/// sockets belong to one thread). With CURVE each entry comes with its public key, and a node that announces a new
/// key at the same endpoint is a new entry.
///
/// Every announced value is hostile: an endpoint must be `tcp://host:port` or `ipc://path` of at most
/// ``maxEndpointBytes`` bytes, a key 40 Z85 characters; others are rejected and counted. At most `maxEntries`
/// announced entries are held (more are refused and counted, `captures_refused_cap`). An announced entry that no
/// `Welcome` has listed for `forgetAfter` ns is forgotten (so its sockets are closed). Pruning happens only when a
/// `Welcome` arrives: a worker cut off from its collector keeps what it knows. Static entries (`--capture`) are
/// never forgotten, not validated (the operator's word) and do not count against the cap.
///
/// Each announced entry also keeps the highest epoch listed for it: a node restarted at the same endpoint announces a
/// new (higher) epoch and has forgotten every attachment, so the threads attach again at once (SPEC 3.1) instead of
/// at their next periodic Ready. The epoch is only compared: any value is harmless (a forged high one only delays
/// that re-attachment to the periodic Ready).
///
/// No clock inside: every call takes the monotonic time `now` (ns). Thread-safe.
public final class CaptureDirectory: @unchecked Sendable {
    /// One capture node to connect to.
    public struct Entry: Hashable, Sendable {
        public var endpoint: String
        /// The capture node's CURVE public key (Z85), when CURVE is on.
        public var key: String?

        public init(endpoint: String, key: String? = nil) {
            self.endpoint = endpoint
            self.key = key
        }
    }

    /// What one `Welcome` changed.
    public struct Update: Sendable, Equatable {
        /// Entries new to the directory.
        public var added: [Entry] = []
        /// Entries forgotten (not listed for `forgetAfter`).
        public var forgotten: [Entry] = []
        /// Entries held already that were listed with a higher epoch than before (their node restarted).
        public var restarted: [Entry] = []
        /// Counter names to add one to (`captures_rejected_endpoint`, `captures_rejected_key`, `captures_refused_cap`).
        public var counters: [String] = []

        public init() {}
    }

    /// `--max-captures`' default.
    public static let defaultMaxEntries = 64
    /// How long an announced entry is kept without being listed: 30 s.
    public static let defaultForgetAfter: UInt64 = 30_000_000_000
    /// The longest endpoint accepted, in UTF-8 bytes.
    public static let maxEndpointBytes = 256

    public let maxEntries: Int
    public let forgetAfter: UInt64
    /// Whether an entry needs a key (CURVE on): an announced one without a key is rejected.
    public let requiresKey: Bool

    private let lock = NSLock()
    private var staticEntries: [Entry] = []
    /// Announced entries and when a Welcome last listed each, in the order learned.
    private var announced: [Entry] = []
    private var lastListed: [Entry: UInt64] = [:]
    /// The highest epoch listed for each announced entry.
    private var epochs: [Entry: UInt64] = [:]
    private var generation: UInt64 = 0

    /// - Parameters:
    ///   - initial: static endpoints (`--capture`), with `key` (`--capture-key`) each.
    ///   - maxEntries: the most announced entries held (`--max-captures`).
    public init(
        _ initial: [String], key: String? = nil, maxEntries: Int = CaptureDirectory.defaultMaxEntries,
        forgetAfter: UInt64 = CaptureDirectory.defaultForgetAfter, requiresKey: Bool = false
    ) {
        self.maxEntries = max(0, maxEntries)
        self.forgetAfter = forgetAfter
        self.requiresKey = requiresKey
        for endpoint in initial {
            let entry = Entry(endpoint: endpoint, key: key)
            if !staticEntries.contains(entry) { staticEntries.append(entry) }
        }
    }

    /// Takes in the capture nodes one `Welcome` lists, received at `now`, without their epochs.
    public func learn(_ listed: [(endpoint: String, key: String?)], at now: UInt64) -> Update {
        learnWithEpochs(listed.map { ($0.endpoint, $0.key, 0) }, at: now)
    }

    /// Takes in the capture nodes one `Welcome` lists, received at `now`: new valid ones are added (up to the cap),
    /// listed ones are kept (and marked restarted when listed with a higher epoch), and announced ones not listed for
    /// `forgetAfter` are forgotten.
    public func learnWithEpochs(_ listed: [(endpoint: String, key: String?, epoch: UInt64)], at now: UInt64) -> Update {
        var update = Update()
        lock.withLock {
            // 1. Validate; refresh the entries already held.
            var new: [Entry] = []
            var listedEpochs: [Entry: UInt64] = [:]
            for (endpoint, key, epoch) in listed {
                guard Self.isValidEndpoint(endpoint) else {
                    update.counters.append("captures_rejected_endpoint")
                    continue
                }
                let key = key.flatMap { $0.isEmpty ? nil : $0 }
                if let key, !Self.isValidKey(key) {
                    update.counters.append("captures_rejected_key")
                    continue
                }
                if requiresKey, key == nil {
                    update.counters.append("captures_rejected_key")
                    continue
                }
                let entry = Entry(endpoint: endpoint, key: key)
                if staticEntries.contains(entry) { continue }
                listedEpochs[entry] = max(listedEpochs[entry] ?? 0, epoch)
                if lastListed[entry] != nil {
                    lastListed[entry] = now
                } else {
                    new.append(entry)
                }
            }
            // 2. Forget the entries not listed for `forgetAfter`, freeing their slots.
            update.forgotten = announced.filter { entry in
                guard let last = lastListed[entry] else { return true }
                return now >= last && now - last >= forgetAfter
            }
            if !update.forgotten.isEmpty {
                let gone = Set(update.forgotten)
                announced.removeAll { gone.contains($0) }
                for entry in gone {
                    lastListed[entry] = nil
                    epochs[entry] = nil
                }
            }
            // A held entry listed with a higher epoch: its node restarted (in the order held, for a stable result).
            for entry in announced {
                guard let epoch = listedEpochs[entry], let known = epochs[entry], epoch > known else { continue }
                epochs[entry] = epoch
                update.restarted.append(entry)
            }
            // 3. Add the new ones, up to the cap.
            for entry in new where lastListed[entry] == nil {
                guard announced.count < maxEntries else {
                    update.counters.append("captures_refused_cap")
                    continue
                }
                announced.append(entry)
                lastListed[entry] = now
                epochs[entry] = listedEpochs[entry] ?? 0
                update.added.append(entry)
            }
            if !update.added.isEmpty || !update.forgotten.isEmpty || !update.restarted.isEmpty { generation &+= 1 }
        }
        return update
    }

    /// Every entry to be connected to now (static ones first) with the highest epoch listed for it (0 for static
    /// entries and entries learned without epochs), and the generation: it changes whenever the set does, or an
    /// entry's epoch rises.
    public func snapshotWithEpochs() -> (generation: UInt64, entries: [(entry: Entry, epoch: UInt64)]) {
        lock.withLock { (generation, staticEntries.map { ($0, 0) } + announced.map { ($0, epochs[$0] ?? 0) }) }
    }

    /// How many entries the directory holds.
    public var count: Int {
        lock.withLock { staticEntries.count + announced.count }
    }

    /// The generation alone (cheap: a detection thread checks it every turn of its loop).
    public var currentGeneration: UInt64 {
        lock.withLock { generation }
    }

    /// `tcp://host:port` (host not empty, port 1...65535) or `ipc://path` (path not empty), printable ASCII, at most
    /// ``maxEndpointBytes`` bytes.
    public static func isValidEndpoint(_ endpoint: String) -> Bool {
        let bytes = Array(endpoint.utf8)
        guard !bytes.isEmpty, bytes.count <= maxEndpointBytes, bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else { return false }
        if endpoint.hasPrefix("ipc://") { return bytes.count > 6 }
        guard endpoint.hasPrefix("tcp://") else { return false }
        let rest = endpoint.dropFirst(6)
        guard let colon = rest.lastIndex(of: ":") else { return false }
        let host = rest[..<colon]
        let port = rest[rest.index(after: colon)...]
        guard !host.isEmpty, !port.isEmpty, port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }),
            let number = Int(port), (1...65_535).contains(number)
        else { return false }
        return true
    }

    private static let z85 = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8)

    /// A CURVE public key in Z85: exactly 40 characters of the Z85 alphabet.
    public static func isValidKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        return bytes.count == 40 && bytes.allSatisfy { z85.contains($0) }
    }
}
