import FacewireProtocol
import FacewireRuntime
import ZeroMQ

/// Hands frames to idle workers: the capture node's side of the credit-based data plane.
///
/// The capture node binds a ROUTER. Each worker thread connects a DEALER and sends a ``Ready`` whenever it is
/// idle; the dispatcher remembers one credit per worker connection, oldest first, and sends each frame to the
/// worker that has waited longest. A frame is therefore never queued behind another one at a busy worker, and
/// "no worker has room" is exact: no credit.
///
/// Not thread-safe: it belongs to the capture thread.
final class FrameDispatcher {
    private let socket: ZMQSocket
    private let counters: Counters
    /// Worker connections with a credit, in the order they became idle.
    private var idle: [[UInt8]] = []
    /// When each waiting worker last said Ready. An idle worker thread repeats Ready every second (SPEC 3.1): a
    /// credit not renewed for ``creditLifetime`` belongs to a worker that died or is cut off, and is not used.
    private var renewed: [[UInt8]: UInt64] = [:]
    /// How long a credit lives without renewal, in nanoseconds (3 s: three missed Ready repeats).
    static let creditLifetime: UInt64 = 3_000_000_000
    /// The worker id each connection gave in its Ready, for logs.
    private var names: [[UInt8]: String] = [:]

    /// The endpoint actually bound.
    let endpoint: String

    /// - Parameter curveSecretKey: CURVE: make the frame socket a CURVE server with this key (the context's ZAP
    ///   handler decides which workers get in).
    init(context: ZMQContext, bind: String, counters: Counters, curveSecretKey: String? = nil) throws {
        socket = try ZMQSocket(context: context, kind: .router)
        self.counters = counters
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

    /// Sends one frame to the idle worker that waited longest.
    /// - Parameters:
    ///   - wait: with no idle worker, wait for one (until `stop`) instead of returning nil.
    ///   - whileWaiting: called about every 100 ms while waiting (the capture node keeps saying hello).
    /// - Returns: the id of the worker that took the frame, or nil when none did.
    func dispatch(_ parts: [[UInt8]], wait: Bool, stop: StopToken, whileWaiting: () -> Void = {}) throws -> String? {
        try collectCredits(timeoutMilliseconds: 0)
        while true {
            while !idle.isEmpty {
                let worker = idle.removeFirst()
                let age = Clock.monotonicNanoseconds() - (renewed.removeValue(forKey: worker) ?? 0)
                guard age <= Self.creditLifetime else {
                    counters.add("credits_expired")  // a dead or unreachable worker: no frame into the void
                    continue
                }
                do {
                    if try socket.send([worker] + parts, dontWait: true) { return names[worker] ?? "?" }
                    counters.add("worker_full")
                } catch let error as ZMQError where !error.isTerminated {
                    counters.add("worker_gone")  // EHOSTUNREACH: it disconnected; try the next one
                }
            }
            guard wait, !stop.isStopped else { return nil }
            try collectCredits(timeoutMilliseconds: 100)
            whileWaiting()
        }
    }

    /// Worker threads holding a credit right now (waiting for a frame).
    var waitingWorkers: Int { idle.count }

    /// Reads the Ready messages that arrived, without waiting: call it regularly, so that a credit's age is the
    /// time since its worker last said Ready, not since the dispatcher last looked.
    func collectPending() throws {
        try collectCredits(timeoutMilliseconds: 0)
    }

    /// Waits up to `timeoutMilliseconds` for Ready messages.
    /// - Returns: whether some worker now holds a credit.
    func awaitCredit(timeoutMilliseconds: Int) throws -> Bool {
        if idle.isEmpty { try collectCredits(timeoutMilliseconds: timeoutMilliseconds) }
        return !idle.isEmpty
    }

    /// Waits until some worker holds a credit, calling `whileWaiting` about every 100 ms.
    /// - Returns: false when `stop` was set first.
    func awaitIdleWorker(stop: StopToken, whileWaiting: () -> Void) throws -> Bool {
        while !stop.isStopped {
            if try awaitCredit(timeoutMilliseconds: 100) { return true }
            whileWaiting()
        }
        return false
    }

    /// Reads the Ready messages that arrived, waiting up to `timeoutMilliseconds` for the first.
    private func collectCredits(timeoutMilliseconds: Int) throws {
        guard try socket.waitForInput(timeoutMilliseconds: timeoutMilliseconds) else { return }
        while let parts = try socket.receive(dontWait: true) {
            guard parts.count == 2, let ready = try? Ready(part: parts[1]) else {
                counters.add("ready_malformed")
                continue
            }
            if names[parts[0]] == nil {
                if names.count > 10_000 { names.removeAll() }  // bounded: ids are only for logs
                names[parts[0]] = ready.worker
            }
            if !idle.contains(parts[0]) { idle.append(parts[0]) }
            renewed[parts[0]] = Clock.monotonicNanoseconds()
        }
    }

    func close() {
        socket.close()
    }
}
