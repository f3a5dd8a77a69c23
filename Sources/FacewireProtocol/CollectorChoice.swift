import Foundation

/// Which of several collectors a client talks to (SPEC.md 18): the one that last said, in a Welcome, that it is active
/// with the highest fencing epoch heard. Pure: the session (``CollectorSession`` in FacewireTransport) hands it each
/// Welcome with the index of the endpoint it came from.
///
/// - An active's Welcome with an epoch at least the highest heard makes its endpoint the one; one with a lower epoch
///   (a fenced collector that has not noticed yet) is ignored.
/// - A standby's Welcome names the active's control endpoint: the client moves there if it is one of its endpoints,
///   otherwise to the next endpoint not known to be a standby.
/// - A single collector's Welcome (no election) counts as epoch 0.
public struct CollectorChoice: Sendable, Equatable {
    /// The endpoints, as the user listed them (`--collector a,b`).
    public let endpoints: [String]
    /// The index of the endpoint everything but hellos goes to.
    public private(set) var active = 0
    /// The highest epoch an active announced.
    public private(set) var epoch: UInt64 = 0
    /// How many times ``active`` changed (a client re-sends its state to a new active at once).
    public private(set) var changes: UInt64 = 0
    /// The endpoints whose last Welcome said standby.
    public private(set) var standbys: Set<Int> = []

    /// What to do with a Welcome.
    public enum Verdict: Equatable, Sendable {
        /// From the active: hand it to the node.
        case deliver
        /// A standby's or a fenced collector's: used here only.
        case consume
    }

    public init(endpoints: [String]) {
        precondition(!endpoints.isEmpty, "at least one collector endpoint")
        self.endpoints = endpoints
    }

    /// Splits `--collector`'s value: endpoints separated by commas, blanks and empty parts ignored, duplicates once.
    public static func endpoints(_ list: String) -> [String] {
        var seen: Set<String> = []
        return list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    /// A Welcome from endpoint `index`.
    public mutating func welcome(role: CollectorRole, leaderEpoch: UInt64, activeEndpoint: String, from index: Int) -> Verdict {
        guard endpoints.indices.contains(index) else { return .consume }
        switch role {
        case .active, .single:
            let announced = role == .single ? 0 : leaderEpoch
            standbys.remove(index)
            guard announced > epoch || (announced == epoch && (index == active || standbys.contains(active))) || endpoints.count == 1
            else { return .consume }
            epoch = announced
            move(to: index)
            return .deliver
        case .standby, .UNRECOGNIZED:
            standbys.insert(index)
            guard index == active else { return .consume }
            if let named = endpoints.firstIndex(of: activeEndpoint), named != index {
                move(to: named)
            } else {
                let count = endpoints.count
                let known = standbys
                if let next = (1..<count).map({ (index + $0) % count }).first(where: { !known.contains($0) }) { move(to: next) }
            }
            return .consume
        }
    }

    private mutating func move(to index: Int) {
        guard index != active else { return }
        active = index
        changes &+= 1
    }
}
