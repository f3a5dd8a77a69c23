/// What `/healthz` says: healthy (200) or not (503), with a one-line reason.
public struct Health: Sendable, Equatable {
    /// Whether the node can do its job.
    public var healthy: Bool
    /// A one-line reason, shown after `ok:` or `unhealthy:`.
    public var detail: String

    public init(healthy: Bool, detail: String) {
        self.healthy = healthy
        self.detail = detail
    }
}
