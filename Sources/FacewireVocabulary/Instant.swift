/// A moment read from both clocks: what every pure core is handed as "now" (the cores read no clock themselves,
/// so tests drive them through any timeline without sleeping).
public struct Instant: Sendable, Equatable {
    /// A monotonic clock, nanoseconds: for durations, deadlines and timeouts.
    public var monotonicNs: UInt64
    /// The wall clock, microseconds since the Unix epoch: for the capture and send times that go on the wire.
    public var wallUs: Int64

    /// A moment read from both clocks.
    public init(monotonicNs: UInt64, wallUs: Int64) {
        self.monotonicNs = monotonicNs
        self.wallUs = wallUs
    }
}
