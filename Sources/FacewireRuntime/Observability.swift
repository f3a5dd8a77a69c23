import CoreMetrics
import Foundation
import Prometheus

/// swift-metrics, exported as Prometheus text on `/metrics` by the node's HTTP server (FacewireHTTP, `--metrics-port`).
///
/// Every node's ``Counters`` are mirrored as Prometheus counters named `facewire_<name>_total`; nodes add
/// histograms (`Timer`) and gauges through swift-metrics directly. Without ``bootstrap()`` swift-metrics records
/// nothing (its default handlers do nothing), so the cost stays out of nodes that export nothing.
public enum Observability {
    /// The registry the Prometheus text is produced from.
    public static let registry = PrometheusCollectorRegistry()

    nonisolated(unsafe) private static var bootstrapped = false
    private static let lock = NSLock()

    /// Points swift-metrics at ``registry`` (once per process).
    public static func bootstrap() {
        lock.withLock {
            guard !bootstrapped else { return }
            bootstrapped = true
            var factory = PrometheusMetricsFactory(registry: registry)
            factory.defaultDurationHistogramBuckets = [
                .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(20),
                .milliseconds(50), .milliseconds(100), .milliseconds(200), .milliseconds(500), .seconds(1),
                .seconds(2), .seconds(5),
            ]
            MetricsSystem.bootstrap(factory)
            // The usual build-info gauge: 1, with what is running in its labels.
            let buildInfo = MetricNameDescriptor(
                namespace: "facewire", metricName: "build", unitName: "info",
                helpText: "1, with the running release and the commit it was built from in the labels")
            registry.makeGauge(descriptor: buildInfo, labels: [("version", BuildInfo.version), ("commit", BuildInfo.commit)])
                .set(1.0 as Double)
        }
    }

    /// Whether metrics are being recorded.
    public static var isEnabled: Bool { lock.withLock { bootstrapped } }

    /// A Prometheus metric name from a counter name: `frames_dropped_no-worker` → `facewire_frames_dropped_no_worker_total`.
    public static func metricName(forCounter name: String) -> String {
        let cleaned = String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
        return "facewire_\(cleaned)_total"
    }
}
