import Foundation

/// What `/healthz` says: healthy (200) or not (503), with a one-line reason, and for a collector its role.
public struct Health: Sendable, Equatable {
    /// Whether the node can do its job.
    public var healthy: Bool
    /// A one-line reason (`"detail"` in the JSON answer).
    public var detail: String
    /// A collector's part: `"active"` (publishing) or `"standby"`; nil for the other roles.
    public var role: String?

    public init(healthy: Bool, detail: String, role: String? = nil) {
        self.healthy = healthy
        self.detail = detail
        self.role = role
    }

    /// The `/healthz` answer: `{"status":"ok"|"unhealthy","detail":…}`, with `"role"` where there is one.
    public var json: String {
        var object: [String: String] = ["status": healthy ? "ok" : "unhealthy", "detail": detail]
        if let role { object["role"] = role }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
