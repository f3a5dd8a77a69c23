import Foundation

/// The capture endpoints a worker should be connected to, shared by its threads.
///
/// The control thread adds endpoints as the collector announces them; each detection thread connects its own
/// socket to the ones it has not seen (ZeroMQ sockets belong to one thread). Thread-safe.
final class CaptureDirectory: @unchecked Sendable {
    private let lock = NSLock()
    private var endpoints: [String] = []

    init(_ initial: [String]) {
        for endpoint in initial { add(endpoint) }
    }

    /// Adds an endpoint; returns whether it was new.
    @discardableResult
    func add(_ endpoint: String) -> Bool {
        lock.withLock {
            if endpoints.contains(endpoint) { return false }
            endpoints.append(endpoint)
            return true
        }
    }

    /// Endpoints from index `from` on, and the new count (so a thread remembers where it stopped).
    func endpoints(from: Int) -> (endpoints: ArraySlice<String>, count: Int) {
        lock.withLock { (endpoints[min(from, endpoints.count)...], endpoints.count) }
    }
}
