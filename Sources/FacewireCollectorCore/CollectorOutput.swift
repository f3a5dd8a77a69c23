import FacewireProtocol

/// What one step of ``CollectorCore`` asks its shell to do, in order: publish messages of the ordered stream,
/// send replies, add to counters and metrics, and log.
public struct CollectorOutput {
    /// An envelope for one or more peers (by ROUTER identity); serialise once, send to each.
    public struct Reply {
        public var identities: [[UInt8]]
        public var envelope: Envelope
        /// The counter to add to when a send fails (`welcome_lost`, `reply_lost`).
        public var lostCounter: String
        /// The envelope already serialised (a cached Welcome), or nil: the shell serialises `envelope`.
        public var bytes: [UInt8]?

        public init(identities: [[UInt8]], envelope: Envelope, lostCounter: String, bytes: [UInt8]? = nil) {
            self.identities = identities
            self.envelope = envelope
            self.lostCounter = lostCounter
            self.bytes = bytes
        }
    }

    /// One log line.
    public struct LogLine: Equatable, Sendable {
        public enum Level: Sendable { case info, warning, error }
        public var level: Level
        public var message: String
        public var metadata: [String: String]

        public init(_ level: Level, _ message: String, _ metadata: [String: String] = [:]) {
            self.level = level
            self.message = message
            self.metadata = metadata
        }
    }

    /// Frames emitted, for `facewire_stream_frames_total` (labels already bounded by the core).
    public struct FrameCount: Hashable, Sendable {
        public var stream: String
        public var status: String
        public var reason: String
        public var count: UInt64
    }

    /// Messages of the ordered stream, in publishing order (the `--output` file gets them too).
    public var publish: [StreamMessage] = []
    public var replies: [Reply] = []
    /// Counter increments, in the order they happened (names are fixed strings, never network data).
    public var counters: [(name: String, amount: UInt64)] = []
    public var logs: [LogLine] = []
    public var frames: [FrameCount] = []
    /// Capture-to-emission latencies of processed frames, in nanoseconds (plausible values only).
    public var latencies: [Int64] = []

    public init() {}

    mutating func count(_ name: String, _ amount: UInt64 = 1) {
        counters.append((name, amount))
    }

    mutating func log(_ level: LogLine.Level, _ message: String, _ metadata: [String: String] = [:]) {
        logs.append(LogLine(level, message, metadata))
    }

    /// The total added to counter `name`, saturating like ``Counters`` (tests).
    public func total(_ name: String) -> UInt64 {
        counters.reduce(0) { $1.name == name ? Self.saturatingAdd($0, $1.amount) : $0 }
    }

    /// `a + b`, or `UInt64.max` when it overflows.
    public static func saturatingAdd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
