import CoreMetrics
import Foundation

/// Named event counters shared by a node's threads (frames sent, dropped, errors, ...).
///
/// Thread-safe; cheap enough for per-frame use. When metrics are on (``Observability/bootstrap()``), every counter
/// is also a Prometheus counter, `facewire_<name>_total`.
public final class Counters: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: UInt64] = [:]
    private var metrics: [String: CoreMetrics.Counter] = [:]

    public init() {}

    /// Adds `amount` to counter `name`.
    public func add(_ name: String, _ amount: UInt64 = 1) {
        let metric: CoreMetrics.Counter? = lock.withLock {
            // Saturating: amounts can come from the network (a skip run's length) and must never trap.
            let (sum, overflow) = (values[name] ?? 0).addingReportingOverflow(amount)
            values[name] = overflow ? .max : sum
            guard Observability.isEnabled else { return nil }
            if let metric = metrics[name] { return metric }
            let metric = CoreMetrics.Counter(label: Observability.metricName(forCounter: name))
            metrics[name] = metric
            return metric
        }
        metric?.increment(by: Int64(clamping: amount))
    }

    /// The current value of counter `name`.
    public func value(_ name: String) -> UInt64 {
        lock.withLock { values[name] ?? 0 }
    }

    /// Every counter's current value.
    public var totals: [String: UInt64] {
        lock.withLock { values }
    }

    /// The names of all counters so far, sorted.
    public var names: [String] {
        lock.withLock { values.keys.sorted() }
    }

    /// All counters, sorted by name, as `name=value` pairs on one line.
    public var summary: String {
        lock.withLock { values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
    }
}
