import FacewireProtocol
import FacewireRuntime
import ZeroMQ

/// A capture node's control connection to the collector (a DEALER): hellos, skips and the stream's end go out on
/// it, never waiting; a message that cannot go is counted (`control_lost`).
final class CollectorLink {
    private let socket: ZMQSocket
    private let counters: Counters

    init(context: ZMQContext, collector: String, security: CurveSecurity?, counters: Counters) throws {
        socket = try ZMQSocket(context: context, kind: .dealer)
        self.counters = counters
        try socket.setHighWaterMarks(send: 100_000)
        try socket.setLinger(milliseconds: 5000)
        try CurveSecurity.secureToCollector(socket, security)
        try socket.connect(collector)
    }

    /// Sends a control message without waiting.
    func send(_ body: Envelope.OneOf_Body) {
        let bytes: [UInt8]? = try? Envelope(body).serializedBytes()
        guard let bytes, (try? socket.send([bytes], dontWait: true)) == true else {
            counters.add("control_lost")
            return
        }
    }

    func close() {
        socket.close()
    }
}
