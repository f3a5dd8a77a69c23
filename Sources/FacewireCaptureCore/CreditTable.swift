/// The capture node's credits: which worker connections may be sent a frame, oldest first. In dispatch protocol 2
/// (SPEC 3) a credit is an assignment from the collector for an attached thread. Pure: every call takes the monotonic
/// time.
///
/// A connection holds at most one credit: a second assignment for it is handed back. A credit not used within
/// ``lifetimeNs`` is handed back too (its thread is idle at the collector's books). At most ``capacity`` connections
/// hold a credit at once.
struct CreditTable {
    /// One connection's credit.
    struct Credit {
        /// When it was granted (monotonic ns).
        var renewedNs: UInt64
        /// The worker id it gave, bounded, for logs.
        var worker: String
    }

    /// What an assignment did to the table.
    enum Renewal: Equatable {
        /// A new credit, last in line.
        case granted
        /// The connection already held one, which is unchanged (the assignment is handed back).
        case renewed
        /// The table holds ``capacity`` credits already.
        case refusedFull
    }

    let capacity: Int
    let lifetimeNs: UInt64
    /// Connections with a credit, in the order their credit was granted.
    private var line: [[UInt8]] = []
    private var credits: [[UInt8]: Credit] = [:]

    init(capacity: Int, lifetimeNs: UInt64) {
        self.capacity = max(1, capacity)
        self.lifetimeNs = lifetimeNs
    }

    /// Connections holding a credit, expired or not.
    var count: Int { line.count }

    /// Whether a credit renewed at `renewedNs` is still good at `now`.
    private func isLive(_ renewedNs: UInt64, at now: UInt64) -> Bool {
        now < renewedNs || now - renewedNs <= lifetimeNs
    }

    /// Grants `identity` a credit at `now` (an assignment of its thread); one it holds already is left as it is.
    mutating func renew(_ identity: [UInt8], worker: String, at now: UInt64) -> Renewal {
        if credits[identity] != nil { return .renewed }
        guard line.count < capacity else { return .refusedFull }
        credits[identity] = Credit(renewedNs: now, worker: worker)
        line.append(identity)
        return .granted
    }

    /// Takes the oldest live credit, if any. Expired credits passed over on the way are removed; their workers are
    /// returned in `expired`.
    mutating func take(at now: UInt64) -> (credit: (identity: [UInt8], worker: String)?, expired: [String]) {
        var expired: [String] = []
        while !line.isEmpty {
            let identity = line.removeFirst()
            guard let credit = credits.removeValue(forKey: identity) else { continue }
            if isLive(credit.renewedNs, at: now) { return ((identity, credit.worker), expired) }
            expired.append(credit.worker)
        }
        return (nil, expired)
    }

    /// Removes every expired credit; returns their workers.
    mutating func removeExpired(at now: UInt64) -> [String] {
        let expired = line.filter { identity in credits[identity].map { !isLive($0.renewedNs, at: now) } ?? true }
        guard !expired.isEmpty else { return [] }
        let workers = expired.compactMap { credits.removeValue(forKey: $0)?.worker }
        let remaining = credits
        line.removeAll { remaining[$0] == nil }
        return workers
    }

    /// Removes every credit; returns their workers.
    mutating func removeAll() -> [String] {
        let workers = line.compactMap { credits[$0]?.worker }
        line = []
        credits = [:]
        return workers
    }

    /// Credits still good at `now`.
    func liveCount(at now: UInt64) -> Int {
        line.reduce(0) { $0 + (credits[$1].map { isLive($0.renewedNs, at: now) } == true ? 1 : 0) }
    }
}

/// Worker threads attached to this capture node (dispatch protocol 2, SPEC 3): each thread's name, as its Ready gave
/// it, and the connection a frame for it goes on. A Ready attaches or renews; an attachment not renewed for
/// ``lifetimeNs`` is forgotten. At most ``capacity`` threads are attached at once (`--max-workers`).
struct Attachments {
    struct Entry {
        var identity: [UInt8]
        var renewedNs: UInt64
        /// The connection it was attached on before its last move, if it moved.
        var previous: [UInt8]? = nil
    }

    enum Attachment: Equatable {
        case attached
        case renewed
        /// Renewed from another connection than before: a reconnect (a connection gets a new routing id), or a second
        /// thread with the same id.
        case moved
        /// Moved back to the connection it moved from: a reconnected connection never comes back, so two live
        /// threads share the id (SPEC 3.1 forbids it; the latest Ready still wins).
        case duplicate
        case refusedFull
    }

    let capacity: Int
    let lifetimeNs: UInt64
    private(set) var entries: [String: Entry] = [:]

    init(capacity: Int, lifetimeNs: UInt64) {
        self.capacity = max(1, capacity)
        self.lifetimeNs = lifetimeNs
    }

    var count: Int { entries.count }

    /// Records a Ready from thread `name` on connection `identity` (a thread that reconnected moves to its new one).
    mutating func attach(_ name: String, identity: [UInt8], at now: UInt64) -> Attachment {
        if let entry = entries[name] {
            guard entry.identity != identity else {
                entries[name]?.renewedNs = now
                return .renewed
            }
            entries[name] = Entry(identity: identity, renewedNs: now, previous: entry.identity)
            return entry.previous == identity ? .duplicate : .moved
        }
        guard entries.count < capacity else { return .refusedFull }
        entries[name] = Entry(identity: identity, renewedNs: now)
        return .attached
    }

    /// The connection of thread `name`, if it is attached and its attachment is live.
    func identity(of name: String, at now: UInt64) -> [UInt8]? {
        guard let entry = entries[name], now < entry.renewedNs || now - entry.renewedNs <= lifetimeNs else { return nil }
        return entry.identity
    }

    /// Forgets attachments not renewed within the lifetime; returns how many.
    mutating func removeExpired(at now: UInt64) -> Int {
        let before = entries.count
        entries = entries.filter { now < $0.value.renewedNs || now - $0.value.renewedNs <= lifetimeNs }
        return before - entries.count
    }
}
