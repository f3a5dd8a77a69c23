import CZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// An error reported by libzmq: the `errno` value it set and its description.
public struct ZMQError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `errno` value (`zmq_errno()`).
    public var code: Int32
    /// What the failing call was doing.
    public var operation: String

    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// Reads `zmq_errno()` for a call that just failed.
    static func last(_ operation: String) -> ZMQError {
        ZMQError(code: zmq_errno(), operation: operation)
    }

    /// The call would have blocked (`EAGAIN`): a full high-water mark, no peer, or a receive timeout.
    public var wouldBlock: Bool { code == EAGAIN }
    /// The context was shut down (`ETERM`): the socket must be closed.
    public var isTerminated: Bool { code == ETERM }
    /// A signal interrupted the call (`EINTR`).
    public var isInterrupted: Bool { code == EINTR }

    public var description: String {
        "\(operation): \(String(cString: zmq_strerror(code))) (errno \(code))"
    }
}
