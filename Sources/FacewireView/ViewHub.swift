import Foundation

/// The pages connected to the live channel, and what the view pushes to them.
///
/// Each page gets its own bounded queue: a page that reads slower than frames come loses the oldest ones (newest
/// kept), so one slow phone never holds memory or delays another page. Thread-safe.
public final class ViewHub: @unchecked Sendable {
    /// One message to the pages.
    public enum Push: Sendable {
        /// A joined frame: `[u32 big-endian JSON length][JSON][JPEG]`.
        case binary([UInt8])
        /// A status or event, JSON.
        case text(String)
    }

    /// Messages queued per page before the oldest are dropped.
    public static let queuePerClient = 32
    /// Pages connected at once; more are refused (the HTTP server's connection cap bounds them first).
    public static let maxClients = 64

    private let lock = NSLock()
    private var clients: [Int: AsyncStream<Push>.Continuation] = [:]
    private var nextID = 0

    public init() {}

    /// Whether any page is connected (nothing is encoded for the pages otherwise).
    public var hasClients: Bool { lock.withLock { !clients.isEmpty } }

    public var clientCount: Int { lock.withLock { clients.count } }

    /// A new page's queue, or nil when ``maxClients`` are connected. The queue ends when ``leave(_:)`` is called.
    public func join() -> (id: Int, pushes: AsyncStream<Push>)? {
        let (stream, continuation) = AsyncStream<Push>.makeStream(bufferingPolicy: .bufferingNewest(Self.queuePerClient))
        let id: Int? = lock.withLock {
            guard clients.count < Self.maxClients else { return nil }
            nextID += 1
            clients[nextID] = continuation
            return nextID
        }
        guard let id else {
            continuation.finish()
            return nil
        }
        return (id, stream)
    }

    public func leave(_ id: Int) {
        lock.withLock { clients.removeValue(forKey: id) }?.finish()
    }

    /// Queues `push` for every page.
    public func broadcast(_ push: Push) {
        for continuation in lock.withLock({ Array(clients.values) }) { continuation.yield(push) }
    }
}
