/// Keeps each message of a failover group's results once (SPEC.md 18.3). A subscriber follows every collector of the
/// group; a collector that takes over publishes again, under their numbers, the messages its predecessor may not have
/// published.
///
/// Per (stream, epoch) it remembers the highest leader epoch and, under it, the highest `publication` kept:
/// - a message of that leader epoch is a repeat when its number is at or below the highest;
/// - a message of an older leader (a fenced collector that has not noticed yet, or a copy a successor republished)
///   is a repeat: every number an active may publish, its successor had before it took over, and numbers past them;
/// - a message of a newer leader is kept, and its number becomes the highest: a successor that took over without
///   a current copy of the state (SPEC.md 18.5) numbers afresh, and its messages must not be taken for repeats
///   (counted: ``renumbered``).
/// Messages without a number (a collector without election) always pass.
public struct PublicationFilter: Sendable {
    private struct Key: Hashable {
        var stream: String
        var epoch: UInt64
    }

    private struct Highest {
        var leaderEpoch: UInt64
        var number: UInt64
        var order: UInt64
    }

    private var highest: [Key: Highest] = [:]
    private var order: UInt64 = 0
    /// The most (stream, epoch) pairs remembered; beyond it the least recently numbered half is forgotten.
    public let maxStreams: Int
    /// Messages kept out as repeats so far.
    public private(set) var repeats: UInt64 = 0
    /// Numbers skipped: messages of the group that never reached this subscriber (a PUB socket drops silently when a
    /// subscriber falls behind).
    public private(set) var skipped: UInt64 = 0
    /// Times a newer leader numbered a (stream, epoch) afresh (a takeover without a current copy of the state).
    public private(set) var renumbered: UInt64 = 0

    public init(maxStreams: Int = 65_536) { self.maxStreams = max(2, maxStreams) }

    /// Whether to keep a message of (stream, epoch) with `publication` (0: not numbered) from the active of
    /// `leaderEpoch`.
    public mutating func keep(stream: String, epoch: UInt64, publication: UInt64, leaderEpoch: UInt64) -> Bool {
        guard publication > 0 else { return true }
        let key = Key(stream: stream, epoch: epoch)
        if let last = highest[key] {
            if leaderEpoch < last.leaderEpoch || (leaderEpoch == last.leaderEpoch && publication <= last.number) {
                repeats &+= 1
                return false
            }
            if publication <= last.number {
                renumbered &+= 1
            } else if publication - last.number > 1 {
                let (sum, overflow) = skipped.addingReportingOverflow(publication - last.number - 1)
                skipped = overflow ? .max : sum
            }
        } else if highest.count >= maxStreams {
            let keep = highest.sorted { $0.value.order > $1.value.order }.prefix(maxStreams / 2)
            highest = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
        }
        order &+= 1
        highest[key] = Highest(leaderEpoch: leaderEpoch, number: publication, order: order)
        return true
    }
}
