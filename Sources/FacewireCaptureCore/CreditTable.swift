/// The capture node's credits (SPEC 3.1): which worker connections may be sent a frame, oldest first. Pure: every
/// call takes the monotonic time.
///
/// A connection holds at most one credit. A repeated Ready renews the credit's expiry and keeps its place in line; a
/// credit not renewed for ``lifetimeNs`` belongs to a worker that died or is cut off and is never used. At most
/// ``capacity`` connections hold a credit at once (`--max-workers`): a Ready from one more is refused.
struct CreditTable {
    /// One connection's credit.
    struct Credit {
        /// When its worker last said Ready (monotonic ns).
        var renewedNs: UInt64
        /// The worker id it gave, bounded, for logs.
        var worker: String
    }

    /// What a Ready did to the table.
    enum Renewal: Equatable {
        /// A new credit, last in line.
        case granted
        /// The connection already held one: its expiry starts again, its place in line stays.
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

    /// Records a Ready from `identity` at `now`.
    mutating func renew(_ identity: [UInt8], worker: String, at now: UInt64) -> Renewal {
        if credits[identity] != nil {
            credits[identity]?.renewedNs = now
            return .renewed
        }
        guard line.count < capacity else { return .refusedFull }
        credits[identity] = Credit(renewedNs: now, worker: worker)
        line.append(identity)
        return .granted
    }

    /// Takes the oldest live credit, if any. Expired credits passed over on the way are removed and counted in
    /// `expired`.
    mutating func take(at now: UInt64) -> (credit: (identity: [UInt8], worker: String)?, expired: Int) {
        var expired = 0
        while !line.isEmpty {
            let identity = line.removeFirst()
            guard let credit = credits.removeValue(forKey: identity) else { continue }
            if isLive(credit.renewedNs, at: now) { return ((identity, credit.worker), expired) }
            expired += 1
        }
        return (nil, expired)
    }

    /// Removes every expired credit; returns how many.
    mutating func removeExpired(at now: UInt64) -> Int {
        let expired = line.filter { identity in credits[identity].map { !isLive($0.renewedNs, at: now) } ?? true }
        guard !expired.isEmpty else { return 0 }
        for identity in expired { credits[identity] = nil }
        let remaining = credits
        line.removeAll { remaining[$0] == nil }
        return expired.count
    }

    /// Credits still good at `now`.
    func liveCount(at now: UInt64) -> Int {
        line.reduce(0) { $0 + (credits[$1].map { isLive($0.renewedNs, at: now) } == true ? 1 : 0) }
    }
}
