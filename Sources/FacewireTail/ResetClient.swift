import FacewireProtocol
import FacewireRuntime
import FacewireTransport
import Foundation
import ZeroMQ

/// Asks a collector to reset tracking on a stream (`facewire reset`), as Affdex's `reset` does: live tracks
/// end, frame counts restart, faces seen afterwards get new tracking IDs.
public enum ResetClient {
    /// Sends a `Reset` for `stream` ("" = every open stream) and waits for the collector's reply.
    /// - Returns: the streams the collector reset (empty: it has no open stream of that name).
    /// - Throws: ``NodeError`` when no reply came within `timeoutSeconds`.
    public static func reset(collector: String, stream: String, timeoutSeconds: Double, security: CurveSecurity? = nil) throws -> [String] {
        let context = ZMQContext()
        let session = try CollectorSession(context: context, collector: collector, security: security, purpose: .request)
        defer { session.close() }
        var request = ResetRequest()
        request.stream = stream
        request.requestID = "reset-\(getpid())-\(Clock.monotonicNanoseconds() % 1_000_000_000)"
        // Queued until the connection is up; a DEALER sends it once connected.
        guard session.send(.reset(request)) else {
            throw NodeError("cannot queue the reset request for \(collector)")
        }
        let deadline = Clock.monotonicNanoseconds() + UInt64(max(0, timeoutSeconds) * 1e9)
        while Clock.monotonicNanoseconds() < deadline {
            let left = Int((deadline - Clock.monotonicNanoseconds()) / 1_000_000) + 1
            guard case .resetReply(let reply) = try session.receive(timeoutMilliseconds: min(left, 200)),
                reply.requestID == request.requestID
            else { continue }  // nothing yet, or a stray message: keep waiting for ours
            return reply.streams
        }
        throw NodeError("no answer from the collector at \(collector) within \(timeoutSeconds) s")
    }
}
