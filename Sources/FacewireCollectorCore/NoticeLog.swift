import FacewireVocabulary

/// Rate limits log lines about rejections and caps: the first of a kind is logged, then at most one per
/// interval, carrying how many were not logged in between. Kinds are fixed names, never network data.
public struct NoticeLog: Sendable {
    public let interval: UInt64
    private var lastLogged: [String: UInt64] = [:]
    private var suppressed: [String: UInt64] = [:]

    public init(interval: UInt64) { self.interval = interval }

    /// Notes one occurrence of `kind` at `now`; returns the line to log, or nil while the interval runs.
    public mutating func note(
        _ kind: String, _ message: String, _ metadata: [String: String] = [:], at now: UInt64
    ) -> LogLine? {
        if let last = lastLogged[kind], now &- last < interval {
            suppressed[kind, default: 0] &+= 1
            return nil
        }
        lastLogged[kind] = now
        var metadata = metadata
        metadata["kind"] = kind
        if let count = suppressed.removeValue(forKey: kind) { metadata["not_logged_since_last"] = "\(count)" }
        return LogLine(.warning, message, metadata)
    }
}
