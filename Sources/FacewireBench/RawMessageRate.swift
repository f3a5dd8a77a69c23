import FacewireProtocol
import FacewireRuntime
import Foundation
import ZeroMQ

/// **A test tool**: how many messages of a given size one PUSH socket carries to one PULL socket over TCP
/// loopback, with nothing else done per message (`facewire bench zmq-rate`): the ceiling any node built on libzmq
/// has on this machine, to compare the collector's rate with. Sender and receiver are two threads of this process,
/// each with its own socket (libzmq's I/O thread does the TCP work, as in every node).
public enum RawMessageRate {
    public struct Report: Sendable, Encodable {
        public var messages: Int
        public var bytes: Int
        public var seconds: Double
        public var rate: Double
    }

    /// The largest message measured, and the most messages.
    public static let maxBytes = 16 << 20
    public static let maxMessages = 100_000_000

    /// Sends `messages` messages of `bytes` bytes from a PUSH to a PULL on `127.0.0.1`, timed from the first message
    /// received to the last.
    public static func measure(messages: Int, bytes: Int) throws -> Report {
        guard (1...maxMessages).contains(messages), (1...maxBytes).contains(bytes) else {
            throw NodeError("messages must be 1...\(maxMessages) and bytes 1...\(maxBytes)")
        }
        let context = ZMQContext()
        defer { context.shutdown() }
        let pull = try ZMQSocket(context: context, kind: .pull)
        defer { pull.close() }
        try pull.setHighWaterMarks(receive: 100_000)
        let endpoint = try pull.bind("tcp://127.0.0.1:*")
        let threads = NodeThreads()
        threads.spawn("push") {
            let push = try ZMQSocket(context: context, kind: .push)
            defer { push.close() }
            try push.setHighWaterMarks(send: 100_000)
            try push.setLinger(milliseconds: 10_000)
            try push.connect(endpoint)
            let payload = [UInt8](repeating: 0x5A, count: bytes)
            for _ in 0..<messages { try push.send([payload]) }
        }
        guard try pull.receive() != nil else { throw NodeError("nothing received") }
        let start = Clock.monotonicNanoseconds()
        for _ in 1..<messages { _ = try pull.receive() }
        let seconds = Double(Clock.monotonicNanoseconds() - start) / 1e9
        if let failure = threads.join().first { throw NodeError(failure) }
        return Report(messages: messages, bytes: bytes, seconds: seconds, rate: Double(messages - 1) / max(seconds, 1e-9))
    }
}
