import FacewireProtocol
import FacewireRuntime
import FacewireTransport
import ZeroMQ

/// A capture node's control connection to the collector (a ``CollectorSession``): hellos, skips and the stream's
/// end go out on it, never waiting; a message that cannot go is counted (`control_lost`).
final class CollectorLink {
    private let session: CollectorSession
    private let counters: Counters

    init(context: ZMQContext, collector: String, security: CurveSecurity?, counters: Counters) throws {
        session = try CollectorSession(context: context, collector: collector, security: security, purpose: .captureControl)
        self.counters = counters
    }

    /// Sends a control message without waiting.
    func send(_ body: Envelope.OneOf_Body) {
        if !session.send(body) { counters.add("control_lost") }
    }

    func close() {
        session.close()
    }
}
