import CZeroMQ
import Foundation

/// A libzmq context: owns the I/O threads and every socket made from it.
///
/// Contexts are thread-safe. Call ``shutdown()`` to make every blocking call on its sockets return
/// with an `ETERM` error (a clean way to stop threads that own sockets). ``terminate()`` delivers what closed sockets
/// still queue (each within its linger) and ends the context; a node calls it before its process exits, because a
/// process that exits first loses those messages (libzmq sends from its own I/O thread). Otherwise the context is
/// terminated when the object is released, after every socket was closed.
public final class ZMQContext: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    private let lock = NSLock()
    private var isTerminated = false

    /// Creates a context.
    /// - Parameter ioThreads: libzmq I/O threads (1 is enough for about a gigabyte per second).
    public init(ioThreads: Int32 = 1) {
        guard let handle = zmq_ctx_new() else {
            fatalError("zmq_ctx_new failed: \(ZMQError.last("zmq_ctx_new"))")
        }
        zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads)
        self.handle = handle
    }

    /// Makes every blocking call on this context's sockets fail with `ETERM`; sockets must then be closed.
    public func shutdown() {
        zmq_ctx_shutdown(handle)
    }

    /// Interrupts blocking calls (as ``shutdown()``), waits until every socket is closed and each closed socket's
    /// queued messages are sent or its linger runs out, then ends the context. Call it once every socket this thread
    /// owns is closed; sockets of other threads close when their blocking calls return `ETERM`. Idempotent; no socket
    /// may be made afterwards.
    public func terminate() {
        let first = lock.withLock {
            defer { isTerminated = true }
            return !isTerminated
        }
        guard first else { return }
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }

    deinit {
        terminate()
    }

    /// The libzmq version in use, e.g. "4.3.4".
    public static var libraryVersion: String {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }
}
