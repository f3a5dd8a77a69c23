import FacewireProtocol
import FacewireRuntime
import ZeroMQ
import FacewireCaptureCore

/// The capture node's frame socket: a ROUTER that worker threads attach to (``Ready``) and that frames go out on. It
/// only moves bytes; which thread gets which frame is the collector's assignment and ``CaptureCore``'s decision
/// (SPEC 3).
///
/// Not thread-safe: it belongs to the capture thread.
final class FrameRouter {
    private let socket: ZMQSocket

    /// The endpoint actually bound.
    let endpoint: String

    /// - Parameter curveSecretKey: CURVE: make the frame socket a CURVE server with this key (the context's ZAP
    ///   handler decides which workers get in).
    init(context: ZMQContext, bind: String, curveSecretKey: String? = nil) throws {
        socket = try ZMQSocket(context: context, kind: .router)
        if let curveSecretKey { try socket.makeCurveServer(secretKey: curveSecretKey) }
        // Fail at once (EHOSTUNREACH) for a worker that disconnected instead of dropping the frame silently.
        try socket.setRouterMandatory(true)
        try socket.setHighWaterMarks(send: 4, receive: 1000)
        try socket.setMaxMessageSize(Int64(Wire.maxHeaderBytes))
        try socket.setTCPKeepalive(idleSeconds: 10, intervalSeconds: 2, count: 3)
        // Frames already handed to a worker still go out when the node closes at the end of a file.
        try socket.setLinger(milliseconds: 10_000)
        endpoint = try socket.bind(bind)
    }

    /// The Readys that arrived, waiting up to `timeoutMilliseconds` for the first or for input on `others`: each with
    /// its connection's routing id, nil for one that does not parse, and which of `others` have input. At most `limit`
    /// Readys per call, so a flood cannot hold the loop.
    func receiveReadys(
        timeoutMilliseconds: Int, wakingFor others: [ZMQSocket] = [], limit: Int = 10_000
    ) throws -> (readys: [(identity: [UInt8], ready: Result<Ready, ProtocolError>)], othersWithInput: [Bool]) {
        let input = try ZMQSocket.poll([socket] + others, timeoutMilliseconds: timeoutMilliseconds)
        let othersWithInput = Array(input.dropFirst())
        guard input[0] else { return ([], othersWithInput) }
        var readys: [(identity: [UInt8], ready: Result<Ready, ProtocolError>)] = []
        while readys.count < limit, let parts = try socket.receive(dontWait: true) {
            guard parts.count == 2 else {
                readys.append(([], .failure(ProtocolError(.malformed, "a Ready of \(parts.count - 1) parts"))))
                continue
            }
            readys.append((parts[0], Result { try Ready(part: parts[1]) }.mapError { $0 as? ProtocolError ?? ProtocolError(.malformed, "\($0)") }))
        }
        return (readys, othersWithInput)
    }

    /// Sends a frame to connection `identity` without waiting.
    func send(_ parts: [[UInt8]], to identity: [UInt8]) -> CaptureCore<[UInt8]>.SendOutcome {
        do {
            return try socket.send([identity] + parts, dontWait: true) ? .sent : .full
        } catch {
            return .gone  // EHOSTUNREACH: it disconnected (or the context is gone)
        }
    }

    func close() {
        socket.close()
    }
}
