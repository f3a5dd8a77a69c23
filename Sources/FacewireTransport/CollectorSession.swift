import FacewireProtocol
import Foundation
import ZeroMQ

/// Which collector of a failover group a node's sessions talk to (a ``CollectorChoice`` under a lock): one session
/// reads the Welcomes and moves it, others of the same node (a worker's results sessions) follow it.
public final class SharedCollectorChoice: @unchecked Sendable {
    private let lock = NSLock()
    private var choice: CollectorChoice

    public init(endpoints: [String]) { choice = CollectorChoice(endpoints: endpoints) }

    /// The choice now.
    public var value: CollectorChoice { lock.withLock { choice } }

    /// Hands it a Welcome from endpoint `index`.
    func welcome(_ welcome: Welcome, from index: Int) -> CollectorChoice.Verdict {
        lock.withLock {
            choice.welcome(role: welcome.role, leaderEpoch: welcome.leaderEpoch, activeEndpoint: welcome.activeEndpoint, from: index)
        }
    }
}

/// A node's connection to the collector: the one place where a socket that talks to the collector is made.
///
/// Every node that is not the collector keeps one or more of these: a worker (its control session and one results
/// session per detection thread), a capture node (its control session), a view and a tail (to learn the results
/// stream's endpoint and, for the view, the capture nodes' previews), `facewire reset` (one request). Each is a DEALER
/// connected to the collector's control endpoint, CURVE-secured when the node is, with the options its ``Purpose``
/// needs. The hello it says, when and how often, and how a reply is read are here too, so that a change to discovery
/// (another collector to fail over to, say) is made once.
///
/// Not thread-safe: like its ZeroMQ socket, a session belongs to the thread that made it. No clock inside: the
/// hello schedule takes the monotonic time from its caller.
public final class CollectorSession {
    /// What a session is for; each sets the socket options that purpose needs.
    public enum Purpose: Sendable {
        /// Hellos out, Welcomes in (worker, view, tail): nothing kept at close.
        case discovery
        /// A capture node's hellos, skips, stream ends and dispatch requests: up to 100,000 queued while the collector
        /// is away, and up to 5 s at close for the last of them (a stream's end) to go out. Assignments come back.
        case captureControl
        /// A worker thread's results: up to 10,000 queued, and up to 2 s at close so that the answers to the frames
        /// in hand go out when a worker stops.
        case results
        /// One request and its reply (`facewire reset`).
        case request

        /// Messages from the collector queued unread at most (`ZMQ_RCVHWM`). A collector answers a hello with one
        /// Welcome (and pushes one when the capture nodes change), so 16 is ample where they are read. A capture node
        /// reads assignments, at most 64 outstanding (`DispatchRequest.wanted`): 256. Results sessions never read: a
        /// collector sends them nothing, and a hostile peer that does fills one slot, after which libzmq stops reading
        /// the connection. (0 would mean unbounded.)
        public var receiveQueue: Int32 {
            switch self {
            case .discovery, .request: 16
            case .captureControl: 256
            case .results: 1
            }
        }
    }

    /// A message from the collector, checked.
    public enum Reply: Sendable {
        case welcome(Welcome)
        case resetReply(ResetReply)
        /// Dispatch protocol 2: a thread for the capture node's next frame.
        case assignment(Assignment)
        /// Anything else: not one part, not an envelope, or not a reply a node expects (count it as
        /// `control_malformed`).
        case malformed
    }

    /// One DEALER per collector endpoint, in the order given; all of them are polled (``ZMQSocket/poll(_:timeoutMilliseconds:)``).
    public let sockets: [ZMQSocket]
    /// The collectors' control endpoints, as given (`tcp://a:5556,tcp://b:5556`: a failover group, SPEC.md 18).
    public let collector: String
    /// Which endpoint is the active collector's (shared with the node's other sessions when given).
    public let choice: SharedCollectorChoice
    /// Whether every collector's Welcome is handed to the caller (a tail that follows them all), not only the active's.
    let welcomesFromAll: Bool
    /// What the session is for: a results session never reads, so it drains before each send (``drainUnread()``).
    let purpose: Purpose
    private let helloBytes: [UInt8]?
    private var lastHello: UInt64?
    /// The endpoint the last reply came from (its host replaces a wildcard in the Welcome's endpoints).
    public private(set) var lastReplyIndex = 0
    private var nextRead = 0

    /// The active collector's socket: where everything but hellos goes.
    public var socket: ZMQSocket { sockets[min(choice.value.active, sockets.count - 1)] }

    /// How many times the active collector changed (a node re-sends its state then: a capture node its hello and
    /// request, a worker thread its Idle).
    public var activeChanges: UInt64 { choice.value.changes }

    /// Connects to `collector`: one endpoint, or several separated by commas (a failover group: hellos go to each,
    /// everything else to the one that says it is active).
    /// - Parameters:
    ///   - security: CURVE settings (nil: plain TCP); with them the socket is a CURVE client of the collector.
    ///   - hello: what ``sayHelloIfDue(now:)`` says; nil for a session that never says hello.
    ///   - following: another session's choice of the active collector, followed instead of this session's own (a
    ///     session that never reads, such as a worker thread's results).
    ///   - welcomesFromAll: hand every collector's Welcome to the caller, not only the active's.
    /// - Throws: ``ZMQError`` or ``CurveConfigurationError`` when the socket cannot be made or connected.
    public init(
        context: ZMQContext, collector: String, security: CurveSecurity?, purpose: Purpose, hello: Hello? = nil,
        following: SharedCollectorChoice? = nil, welcomesFromAll: Bool = false
    ) throws {
        var endpoints = CollectorChoice.endpoints(collector)
        if endpoints.isEmpty { endpoints = [collector] }
        var sockets: [ZMQSocket] = []
        do {
            for endpoint in endpoints {
                let socket = try ZMQSocket(context: context, kind: .dealer)
                sockets.append(socket)
                // Whatever the purpose, what the peer at the collector's endpoint sends is bounded before it costs memory:
                // no message over Wire.maxControlMessageBytes (the connection is dropped first), and few queued unread.
                try socket.setMaxMessageSize(Wire.maxControlMessageBytes)
                try socket.setHighWaterMarks(receive: purpose.receiveQueue)
                switch purpose {
                case .discovery, .request:
                    break
                case .captureControl:
                    try socket.setHighWaterMarks(send: 100_000)
                    try socket.setLinger(milliseconds: 5000)
                case .results:
                    try socket.setHighWaterMarks(send: 10_000)
                    try socket.setLinger(milliseconds: 2000)
                }
                try CurveSecurity.secureToCollector(socket, security)
                try socket.connect(endpoint)
            }
            helloBytes = try hello.map { try Envelope(.hello($0)).serializedBytes() }
        } catch {
            sockets.forEach { $0.close() }
            throw error
        }
        self.sockets = sockets
        self.collector = collector
        self.welcomesFromAll = welcomesFromAll
        self.purpose = purpose
        choice = following ?? SharedCollectorChoice(endpoints: endpoints)
    }

    /// A hello for `role` from `nodeID` (the fields every role fills).
    public static func hello(role: NodeRole, nodeID: String) -> Hello {
        var hello = Hello()
        hello.role = role
        hello.nodeID = nodeID
        if role == .capture || role == .worker { hello.dispatch = Wire.dispatchVersion }
        return hello
    }

    /// Says hello if none was said yet or the last was ``Wire/helloIntervalMilliseconds`` ago or more (the collector
    /// answers each with a Welcome, and forgets a node that stops saying it). Never waits.
    /// - Parameter now: monotonic time, ns.
    /// - Returns: whether a hello was due (and so sent or, if the queue was full, dropped).
    @discardableResult
    public func sayHelloIfDue(now: UInt64) -> Bool {
        guard let helloBytes else { return false }
        if let lastHello, now &- lastHello < UInt64(Wire.helloIntervalMilliseconds) * 1_000_000 { return false }
        for socket in sockets { _ = try? socket.send([helloBytes], dontWait: true) }
        lastHello = now
        return true
    }

    /// Makes the next ``sayHelloIfDue(now:)`` say hello at once (a new active collector should hear from the node now).
    public func helloNow() { lastHello = nil }

    /// Queues `body` for the collector without waiting: a hello or a reset for every collector (a standby answers with
    /// a Welcome naming the active, and only the active resets), anything else for the active one.
    /// - Returns: false when it cannot go (the queue is full, or the socket failed): the caller counts it.
    public func send(_ body: Envelope.OneOf_Body) -> Bool {
        guard let bytes: [UInt8] = try? Envelope(body).serializedBytes() else { return false }
        switch body {
        case .hello, .reset:
            return sockets.map { (try? $0.send([bytes], dontWait: true)) == true }.contains(true)
        default:
            return send(bytes: bytes)
        }
    }

    /// Queues an already encoded envelope without waiting; false when it cannot go.
    public func send(bytes: [UInt8]) -> Bool {
        if sockets.count > 1, case .results = purpose { drainUnread() }
        return (try? socket.send([bytes], dontWait: true)) == true
    }

    /// Reads what the collectors sent a session whose owner never reads (a worker thread's results: a standby answers a
    /// refused result with a Welcome). Unread, it would fill the connection's receive queue, and libzmq does not let a
    /// connection with unread messages go when its collector dies: the socket would never reconnect to the collector
    /// that comes back at that endpoint, and everything sent there would queue unseen. Welcomes still move the choice.
    private func drainUnread() {
        for (index, socket) in sockets.enumerated() {
            for _ in 0..<16 {
                guard let parts = try? socket.receive(dontWait: true) else { break }
                if case .welcome(let welcome) = Self.reply(parts) { _ = choice.welcome(welcome, from: index) }
            }
        }
    }

    /// Waits up to `timeoutMilliseconds` for a message from the collector and reads it.
    /// - Returns: nil when none came in time.
    /// - Throws: ``ZMQError`` (``ZMQError/isTerminated`` when the context is shut down).
    public func receive(timeoutMilliseconds: Int) throws -> Reply? {
        guard try ZMQSocket.poll(sockets, timeoutMilliseconds: timeoutMilliseconds).contains(true) else { return nil }
        return try receiveNow()
    }

    /// Reads a message from the collectors if one is there, without waiting. A standby's Welcome and a fenced
    /// collector's are used to follow the active one and not handed over (unless ``welcomesFromAll``); so are
    /// assignments and reset replies from any but the active (a message from a collector is checked like any other).
    public func receiveNow() throws -> Reply? {
        if sockets.count == 1 {
            guard let parts = try sockets[0].receive(dontWait: true) else { return nil }
            return Self.reply(parts)
        }
        // Round the sockets until each was found empty in a row (at most 64 messages per socket per call).
        var empty = 0
        var budget = sockets.count * 64
        while empty < sockets.count, budget > 0 {
            budget -= 1
            let index = nextRead % sockets.count
            nextRead &+= 1
            guard let parts = try sockets[index].receive(dontWait: true) else {
                empty += 1
                continue
            }
            empty = 0
            let reply = Self.reply(parts)
            switch reply {
            case .welcome(let welcome):
                guard choice.welcome(welcome, from: index) == .deliver || welcomesFromAll else { continue }
            case .malformed:
                break
            case .resetReply, .assignment:
                guard index == choice.value.active else { continue }
            }
            lastReplyIndex = index
            return reply
        }
        return nil
    }

    /// Checks one received message (pure; the collector is a peer like any other: its messages are checked too).
    public static func reply(_ parts: [[UInt8]]) -> Reply {
        guard parts.count == 1, let envelope = try? Envelope(part: parts[0]) else { return .malformed }
        switch envelope.body {
        case .welcome(let welcome): return .welcome(welcome)
        case .resetReply(let reply): return .resetReply(reply)
        case .assignment(let assignment): return .assignment(assignment)
        default: return .malformed
        }
    }

    /// The results stream's endpoint a Welcome names, with a wildcard host (`tcp://*:port`, `tcp://0.0.0.0:port`)
    /// replaced by the collector's host; nil when it is not an endpoint a node may connect to
    /// (``CaptureDirectory/isValidEndpoint(_:)``): the Welcome is then ignored, as malformed.
    public func publishEndpoint(of welcome: Welcome) -> String? {
        let endpoints = choice.value.endpoints
        let from = endpoints[min(lastReplyIndex, endpoints.count - 1)]
        let endpoint = Endpoint.resolvingWildcard(welcome.publishEndpoint, host: Endpoint.host(of: from) ?? "127.0.0.1")
        return CaptureDirectory.isValidEndpoint(endpoint) ? endpoint : nil
    }

    /// Closes the sockets (with their purpose's linger). Safe to call twice.
    public func close() {
        sockets.forEach { $0.close() }
    }
}
