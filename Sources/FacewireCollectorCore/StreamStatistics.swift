/// What one stream did in one reporting window: the collector logs it every `--stats-interval` seconds.
///
/// Pure bookkeeping: the caller records each emitted frame and asks for a ``Report`` when the window closes.
public struct StreamStatistics: Sendable {
    /// One window's figures.
    public struct Report: Sendable, Equatable, CustomStringConvertible {
        public var seconds: Double
        public var frames: Int
        public var processed: Int
        /// Frames emitted as dropped or error, by reason (for errors, the reason's code before the colon).
        public var dropped: [String: Int]
        /// Results that arrived after their frame was declared dropped, and duplicates (counted by the buffer).
        public var late: UInt64
        public var duplicates: UInt64
        /// Frames per second of capture emitted in the window.
        public var fps: Double
        /// Capture-to-emission latency of the processed frames, in milliseconds (nil with none).
        public var latencyP50: Double?
        public var latencyP99: Double?

        public var description: String {
            var parts = [
                "frames \(frames)", "processed \(processed)",
                "dropped \(dropped.values.reduce(0) { StreamStatistics.add($0, $1) })"
                    + (dropped.isEmpty ? "" : " (" + dropped.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"),
                "late \(late)", "duplicates \(duplicates)", "fps " + Self.format(fps, 1),
            ]
            if let latencyP50, let latencyP99 { parts.append("latency p50 \(Self.format(latencyP50, 1)) ms p99 \(Self.format(latencyP99, 1)) ms") }
            return parts.joined(separator: ", ")
        }

        static func format(_ value: Double, _ decimals: Int) -> String {
            let scale = decimals == 0 ? 1.0 : (0..<decimals).reduce(1.0) { value, _ in value * 10 }
            let rounded = (value * scale).rounded() / scale
            return decimals == 0 ? String(Int(rounded)) : String(rounded)
        }
    }

    private var frames = 0
    private var processed = 0
    private var dropped: [String: Int] = [:]
    private var latencies: [Double] = []
    private var lateAtStart: UInt64 = 0
    private var duplicatesAtStart: UInt64 = 0
    private var windowStart: UInt64

    /// The most latencies kept per window (the oldest half is dropped beyond it), bounding memory.
    static let maxSamples = 4096

    /// Starts a window at `now` (monotonic nanoseconds).
    public init(now: UInt64) { windowStart = now }

    /// Records one emitted frame: processed with its capture-to-emission latency, or dropped/error with a reason.
    /// `count` > 1 records a dropped run of that many sequences at once (the counts saturate, never trap).
    public mutating func record(processed isProcessed: Bool, reason: String, latencyMilliseconds: Double?, count: UInt64 = 1) {
        let amount = Int(clamping: count)
        frames = Self.add(frames, amount)
        if isProcessed {
            processed += 1
            if let latencyMilliseconds, latencyMilliseconds.isFinite {
                if latencies.count >= Self.maxSamples { latencies.removeFirst(Self.maxSamples / 2) }
                latencies.append(latencyMilliseconds)
            }
        } else {
            let code = reason.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
            var name = code.isEmpty ? "unknown" : code
            // A peer chooses reasons: bound the distinct codes kept per window (the rest fold into "other").
            if dropped[name] == nil, dropped.count >= Self.maxReasons { name = "other" }
            dropped[name] = Self.add(dropped[name] ?? 0, amount)
        }
    }

    /// The most distinct reason codes kept per window; further codes are counted as "other".
    static let maxReasons = 32

    static func add(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    /// Closes the window at `now`, given the buffer's running late and duplicate counts, and starts the next.
    public mutating func report(now: UInt64, late: UInt64, duplicates: UInt64) -> Report {
        let seconds = Double(now &- windowStart) / 1e9
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double? {
            sorted.isEmpty ? nil : sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
        }
        let report = Report(
            seconds: seconds, frames: frames, processed: processed, dropped: dropped,
            late: late &- lateAtStart, duplicates: duplicates &- duplicatesAtStart,
            fps: seconds > 0 ? Double(frames) / seconds : 0, latencyP50: percentile(0.5), latencyP99: percentile(0.99))
        self = StreamStatistics(now: now)
        lateAtStart = late
        duplicatesAtStart = duplicates
        return report
    }
}
