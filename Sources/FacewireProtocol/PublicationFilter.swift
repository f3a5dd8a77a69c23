/// Keeps each message of a failover group's results once (SPEC.md 18). A subscriber follows every collector of the
/// group; a collector that takes over publishes again, under their numbers, the messages its predecessor may not have
/// published. A message whose `publication` is at or below the highest seen for its (stream, epoch) is a repeat;
/// messages without a number (a collector without election) always pass.
public struct PublicationFilter: Sendable {
    private struct Key: Hashable {
        var stream: String
        var epoch: UInt64
    }

    private var highest: [Key: (number: UInt64, order: UInt64)] = [:]
    private var order: UInt64 = 0
    /// The most (stream, epoch) pairs remembered; beyond it the least recently numbered half is forgotten.
    public let maxStreams: Int
    /// Messages kept out as repeats so far.
    public private(set) var repeats: UInt64 = 0
    /// Numbers skipped: messages of the group that never reached this subscriber (a PUB socket drops silently when a
    /// subscriber falls behind).
    public private(set) var skipped: UInt64 = 0

    public init(maxStreams: Int = 65_536) { self.maxStreams = max(2, maxStreams) }

    /// Whether to keep a message of (stream, epoch) with `publication` (0: not numbered).
    public mutating func keep(stream: String, epoch: UInt64, publication: UInt64) -> Bool {
        guard publication > 0 else { return true }
        let key = Key(stream: stream, epoch: epoch)
        let last = highest[key]?.number ?? 0
        guard publication > last else {
            repeats &+= 1
            return false
        }
        if last > 0, publication - last > 1 {
            let (sum, overflow) = skipped.addingReportingOverflow(publication - last - 1)
            skipped = overflow ? .max : sum
        }
        order &+= 1
        if highest[key] == nil, highest.count >= maxStreams {
            let keep = highest.sorted { $0.value.order > $1.value.order }.prefix(maxStreams / 2)
            highest = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
        }
        highest[key] = (publication, order)
        return true
    }
}
