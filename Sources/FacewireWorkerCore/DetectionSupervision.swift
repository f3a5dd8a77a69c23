import Foundation

/// Which detection threads are up, and whether the worker is healthy (REFERENCE-NODES.md §3.9).
///
/// A detection thread that dies (its loop throws, or building its analyzer fails) is restarted by its supervisor
/// with a fresh analyzer after a back-off; each death counts as one restart (`detection_thread_restarts`). The worker
/// reports itself unhealthy on `/healthz` while any thread is down, and while more than `maxRestarts` restarts
/// happened in the last `window` ns (a thread that keeps dying is a worker to replace).
///
/// No clock inside: every call takes the monotonic time `now` (ns). Thread-safe.
public final class DetectionSupervision: @unchecked Sendable {
    public let threads: Int
    public let maxRestarts: Int
    public let window: UInt64

    private let lock = NSLock()
    private var down: Set<Int> = []
    private var recentDeaths: [UInt64] = []
    private var total = 0

    /// - Parameters:
    ///   - maxRestarts: restarts tolerated within `window` before the worker reports itself unhealthy (default 3).
    ///   - window: the window, ns (default 60 s).
    public init(threads: Int, maxRestarts: Int = 3, window: UInt64 = 60_000_000_000) {
        self.threads = threads
        self.maxRestarts = maxRestarts
        self.window = window
    }

    /// Thread `thread` died at `now`: it is down until ``started(_:at:)``. Returns the back-off before its restart,
    /// in seconds: 1 s per death within the window, at most 10 s.
    @discardableResult
    public func died(_ thread: Int, at now: UInt64) -> Double {
        lock.withLock {
            down.insert(thread)
            total += 1
            prune(now)
            recentDeaths.append(now)
            return Double(min(10, recentDeaths.count))
        }
    }

    /// Thread `thread` is running again (its analyzer built, its loop entered).
    public func started(_ thread: Int, at now: UInt64) {
        _ = lock.withLock { down.remove(thread) }
    }

    /// Restarts since the worker started.
    public var restarts: Int {
        lock.withLock { total }
    }

    /// Healthy unless a thread is down or more than `maxRestarts` restarts happened within the window; the detail
    /// says which.
    public func health(at now: UInt64) -> (healthy: Bool, detail: String) {
        lock.withLock {
            prune(now)
            if !down.isEmpty {
                return (false, "detection threads down: \(down.sorted().map(String.init).joined(separator: ","))")
            }
            if recentDeaths.count > maxRestarts {
                return (false, "\(recentDeaths.count) detection thread restarts in the last \(window / 1_000_000_000) s")
            }
            return (true, total == 0 ? "all \(threads) detection threads up" : "all \(threads) detection threads up, \(total) restarts")
        }
    }

    private func prune(_ now: UInt64) {
        recentDeaths.removeAll { $0 > now || now - $0 >= window }
    }
}
