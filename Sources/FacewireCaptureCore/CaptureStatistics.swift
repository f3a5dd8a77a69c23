/// What a capture node did in one reporting window, from its counters: frames captured and sent, dropped at the
/// source by reason, encoding time, and rates. Logged every `--stats-interval` seconds.
struct CaptureStatistics {
    private(set) var windowStart: UInt64
    private var last: [String: UInt64] = [:]

    init(now: UInt64) { windowStart = now }

    /// The counters read for the report; the dropped ones are by reason.
    static let dropped: [(counter: String, reason: String)] = [
        ("frames_dropped_no-worker", "no-worker"), ("frames_over_max_fps", "over-max-fps"),
    ]

    /// The window's figures from the node's counter totals (the core's and the shell's).
    mutating func report(totals: [String: UInt64], now: UInt64) -> String {
        let seconds = Double(now - windowStart) / 1e9
        func delta(_ name: String) -> UInt64 {
            let value = totals[name] ?? 0
            defer { last[name] = value }
            return value - min(value, last[name] ?? 0)
        }
        let captured = delta("frames_captured")
        let sent = delta("frames_sent")
        var parts = [
            "captured \(captured)", "sent \(sent)",
            String(format: "%.1f fps captured, %.1f sent", seconds > 0 ? Double(captured) / seconds : 0, seconds > 0 ? Double(sent) / seconds : 0),
        ]
        let drops = Self.dropped.map { ($0.reason, delta($0.counter)) }.filter { $0.1 > 0 }
        parts.append("dropped at source \(drops.reduce(0) { $0 + $1.1 })" + (drops.isEmpty ? "" : " (" + drops.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + ")"))
        let waitMicroseconds = delta("source_wait_us")
        if sent > 0 { parts.append(String(format: "capture to send %.2f ms/frame", Double(waitMicroseconds) / Double(sent) / 1000)) }
        let encoded = delta("frames_encoded")
        let encodeMicroseconds = delta("encode_us")
        if encoded > 0 { parts.append(String(format: "encode %.2f ms/frame", Double(encodeMicroseconds) / Double(encoded) / 1000)) }
        let cameraDrops = totals.keys.sorted().filter { $0.hasPrefix("camera_dropped_") || $0.hasPrefix("stream_dropped_") || $0.hasPrefix("video_dropped_") }
            .map { ($0.split(separator: "_", maxSplits: 2).last.map(String.init) ?? $0, delta($0)) }.filter { $0.1 > 0 }
        if !cameraDrops.isEmpty { parts.append("unusable buffers " + cameraDrops.map { "\($0.0) \($0.1)" }.joined(separator: ", ")) }
        windowStart = now
        return parts.joined(separator: ", ")
    }
}
