import Foundation

/// The capture nodes a worker should be connected to, shared by its threads.
///
/// The control thread adds them as the collector announces them; each detection thread connects its own socket to
/// the ones it has not seen (ZeroMQ sockets belong to one thread). With CURVE each comes with its public key, and a
/// node that announces a new key at the same endpoint is a new entry. Thread-safe.
final class CaptureDirectory: @unchecked Sendable {
    struct Entry: Equatable, Sendable {
        var endpoint: String
        /// The capture node's CURVE public key (Z85), when CURVE is on.
        var key: String?
    }

    private let lock = NSLock()
    private var entries: [Entry] = []

    init(_ initial: [String], key: String? = nil) {
        for endpoint in initial { add(endpoint, key: key) }
    }

    /// Adds a capture node; returns whether it was new.
    @discardableResult
    func add(_ endpoint: String, key: String? = nil) -> Bool {
        let entry = Entry(endpoint: endpoint, key: key)
        return lock.withLock {
            if entries.contains(entry) { return false }
            entries.append(entry)
            return true
        }
    }

    /// Entries from index `from` on, and the new count (so a thread remembers where it stopped).
    func endpoints(from: Int) -> (endpoints: ArraySlice<Entry>, count: Int) {
        lock.withLock { (entries[min(from, entries.count)...], entries.count) }
    }
}
