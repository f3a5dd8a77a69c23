/// Bounds the label values of `facewire_stream_frames_total`, which come from the network: at most
/// `maxStreams` distinct stream ids (the rest are `_other`) and `maxReasons` distinct reason codes (the rest are
/// `other`). A stream keeps its label once given one.
public struct MetricLabels: Sendable {
    public let maxStreams: Int
    public let maxReasons: Int
    private var streams: Set<String> = []
    private var reasons: Set<String> = []
    /// Whether a stream was folded into `_other` (for a notice).
    public private(set) var folded: UInt64 = 0

    /// Distinct `reason` label values handed out so far.
    public var reasonCount: Int { reasons.count }

    public static let otherStream = "_other"
    public static let otherReason = "other"

    public init(maxStreams: Int, maxReasons: Int = 32) {
        self.maxStreams = maxStreams
        self.maxReasons = maxReasons
    }

    /// The label value for `stream`.
    public mutating func stream(_ stream: String) -> String {
        if streams.contains(stream) { return stream }
        guard streams.count < maxStreams else {
            folded &+= 1
            return Self.otherStream
        }
        streams.insert(stream)
        return stream
    }

    /// The label value for a frame's reason: its code (before any `:`), bounded.
    public mutating func reason(_ reason: String) -> String {
        let code = reason.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        if code.isEmpty || reasons.contains(code) { return code }
        guard reasons.count < maxReasons, code.utf8.count <= 64 else { return Self.otherReason }
        reasons.insert(code)
        return code
    }

    /// The number of stream labels in use (at most ``maxStreams``, plus `_other`).
    public var streamCount: Int { streams.count }
}
