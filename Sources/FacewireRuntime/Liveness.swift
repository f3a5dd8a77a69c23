import Foundation

/// When a node's main loop last went round: the `/healthz` check. A loop that stops turning (wedged in a call
/// that never returns) stops beating, and the node reports itself unhealthy.
public final class Liveness: @unchecked Sendable {
    private let lock = NSLock()
    private var last: UInt64 = Liveness.now()
    private var note = ""
    private var ok = true

    public init() {}

    private static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// The loop went round; `detail`, if given, is what `/healthz` shows next. `healthy: false` reports a loop that
    /// runs but cannot do its job (a camera that is gone).
    public func beat(_ detail: String? = nil, healthy: Bool = true) {
        let now = Self.now()
        lock.withLock {
            last = now
            ok = healthy
            if let detail { note = detail }
        }
    }

    /// Healthy when the loop beat within `seconds`.
    public func health(within seconds: Double = 5) -> Health {
        let snapshot: (last: UInt64, note: String, ok: Bool) = lock.withLock { (self.last, self.note, self.ok) }
        let (last, note, ok) = snapshot
        let age = Double(Self.now() - last) / 1e9
        if age > seconds {
            return Health(healthy: false, detail: String(format: "main loop silent for %.1f s", age) + (note.isEmpty ? "" : "; \(note)"))
        }
        return Health(healthy: ok, detail: note.isEmpty ? "running" : note)
    }
}
