import CZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// A libzmq socket.
///
/// Sockets are **not** thread-safe: create, use and close each one on a single thread that you own
/// (never on Swift's cooperative pool, since receives block). Every raw libzmq call goes through this file,
/// which maps `-1`/`errno` to ``ZMQError`` and retries calls interrupted by signals.
public final class ZMQSocket {
    /// The ZeroMQ socket patterns Facewire uses.
    public enum Kind: Sendable {
        case push, pull, pub, sub, dealer, router, rep
        /// A PUB that also hands the application its subscribers' (un)subscriptions (`[1 prefix]`, `[0 prefix]`).
        case xpub

        var rawValue: Int32 {
            switch self {
            case .push: ZMQ_PUSH
            case .pull: ZMQ_PULL
            case .pub: ZMQ_PUB
            case .sub: ZMQ_SUB
            case .dealer: ZMQ_DEALER
            case .router: ZMQ_ROUTER
            case .rep: ZMQ_REP
            case .xpub: ZMQ_XPUB
            }
        }
    }

    private var handle: UnsafeMutableRawPointer?
    /// The context stays alive as long as its sockets.
    public let context: ZMQContext
    public let kind: Kind

    /// Creates a socket. Linger defaults to 0 here (libzmq's default is to wait forever at close).
    public init(context: ZMQContext, kind: Kind) throws {
        guard let handle = zmq_socket(context.handle, kind.rawValue) else {
            throw ZMQError.last("zmq_socket")
        }
        self.handle = handle
        self.context = context
        self.kind = kind
        try setOption(ZMQ_LINGER, Int32(0))
    }

    deinit {
        close()
    }

    /// Closes the socket; later calls fail with `ENOTSOCK`. Safe to call twice.
    public func close() {
        if let handle {
            zmq_close(handle)
            self.handle = nil
        }
    }

    private func socket(_ operation: String) throws -> UnsafeMutableRawPointer {
        guard let handle else { throw ZMQError(code: ENOTSOCK, operation: operation) }
        return handle
    }

    // MARK: - Endpoints

    /// Binds to an endpoint such as `tcp://*:5555`, `tcp://127.0.0.1:*` or `ipc:///tmp/x`.
    /// - Returns: the endpoint actually bound (with the port the kernel chose for `*`).
    @discardableResult
    public func bind(_ endpoint: String) throws -> String {
        let handle = try socket("bind")
        guard zmq_bind(handle, endpoint) == 0 else { throw ZMQError.last("bind \(endpoint)") }
        return try lastEndpoint()
    }

    /// Connects to an endpoint. Succeeds before the peer exists: libzmq reconnects in the background.
    public func connect(_ endpoint: String) throws {
        let handle = try socket("connect")
        guard zmq_connect(handle, endpoint) == 0 else { throw ZMQError.last("connect \(endpoint)") }
    }

    /// Disconnects from an endpoint given to ``connect(_:)``.
    public func disconnect(_ endpoint: String) throws {
        let handle = try socket("disconnect")
        guard zmq_disconnect(handle, endpoint) == 0 else { throw ZMQError.last("disconnect \(endpoint)") }
    }

    /// The last endpoint bound, as libzmq reports it (`ZMQ_LAST_ENDPOINT`).
    public func lastEndpoint() throws -> String {
        let handle = try socket("getsockopt")
        var buffer = [CChar](repeating: 0, count: 512)
        var size = buffer.count
        guard zmq_getsockopt(handle, ZMQ_LAST_ENDPOINT, &buffer, &size) == 0 else {
            throw ZMQError.last("getsockopt ZMQ_LAST_ENDPOINT")
        }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: - Options

    /// Sets an integer option (`ZMQ_SNDHWM`, `ZMQ_LINGER`, ...).
    public func setOption(_ option: Int32, _ value: Int32) throws {
        let handle = try socket("setsockopt")
        var value = value
        guard zmq_setsockopt(handle, option, &value, MemoryLayout<Int32>.size) == 0 else {
            throw ZMQError.last("setsockopt \(option)")
        }
    }

    /// Sets a 64-bit integer option (`ZMQ_MAXMSGSIZE`).
    public func setOption(_ option: Int32, _ value: Int64) throws {
        let handle = try socket("setsockopt")
        var value = value
        guard zmq_setsockopt(handle, option, &value, MemoryLayout<Int64>.size) == 0 else {
            throw ZMQError.last("setsockopt \(option)")
        }
    }

    /// Sets a binary option (`ZMQ_SUBSCRIBE`, `ZMQ_ROUTING_ID`, ...).
    public func setOption(_ option: Int32, _ value: [UInt8]) throws {
        let handle = try socket("setsockopt")
        let result = value.withUnsafeBytes { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) }
        guard result == 0 else { throw ZMQError.last("setsockopt \(option)") }
    }

    /// Reads an integer option (`ZMQ_RCVMORE`, `ZMQ_SNDHWM`, ...).
    public func option(_ option: Int32) throws -> Int32 {
        let handle = try socket("getsockopt")
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(handle, option, &value, &size) == 0 else { throw ZMQError.last("getsockopt \(option)") }
        return value
    }

    /// Queue limits in messages, per peer (`ZMQ_SNDHWM` / `ZMQ_RCVHWM`).
    public func setHighWaterMarks(send: Int32? = nil, receive: Int32? = nil) throws {
        if let send { try setOption(ZMQ_SNDHWM, send) }
        if let receive { try setOption(ZMQ_RCVHWM, receive) }
    }

    /// Refuses (and drops the connection of) any peer that sends a message larger than `bytes`,
    /// before the message is allocated (`ZMQ_MAXMSGSIZE`).
    public func setMaxMessageSize(_ bytes: Int64) throws {
        try setOption(ZMQ_MAXMSGSIZE, bytes)
    }

    /// How long ``close()`` keeps trying to deliver queued messages, in milliseconds (-1: forever).
    public func setLinger(milliseconds: Int32) throws {
        try setOption(ZMQ_LINGER, milliseconds)
    }

    /// Kernel socket buffer sizes in bytes (`ZMQ_SNDBUF` / `ZMQ_RCVBUF`). Small buffers keep queued messages
    /// inside libzmq, where high-water marks count them.
    public func setKernelBuffers(send: Int32? = nil, receive: Int32? = nil) throws {
        if let send { try setOption(ZMQ_SNDBUF, send) }
        if let receive { try setOption(ZMQ_RCVBUF, receive) }
    }

    /// The identity a ROUTER peer sees for this socket (`ZMQ_ROUTING_ID`), up to 255 bytes.
    public func setRoutingID(_ id: [UInt8]) throws {
        try setOption(ZMQ_ROUTING_ID, id)
    }

    /// ROUTER sockets: fail with `EHOSTUNREACH` instead of silently dropping a message to an unknown peer.
    public func setRouterMandatory(_ on: Bool) throws {
        try setOption(ZMQ_ROUTER_MANDATORY, Int32(on ? 1 : 0))
    }

    /// TCP keepalive probes, so a peer host that vanished without closing its connection is noticed
    /// (`ZMQ_TCP_KEEPALIVE*`). Used instead of ZMTP heartbeats, which crash libzmq 4.3.4 when combined with
    /// back-pressure (zeromq/libzmq#3937).
    public func setTCPKeepalive(idleSeconds: Int32, intervalSeconds: Int32, count: Int32) throws {
        try setOption(ZMQ_TCP_KEEPALIVE, Int32(1))
        try setOption(ZMQ_TCP_KEEPALIVE_IDLE, idleSeconds)
        try setOption(ZMQ_TCP_KEEPALIVE_INTVL, intervalSeconds)
        try setOption(ZMQ_TCP_KEEPALIVE_CNT, count)
    }

    /// How soon a connecting socket retries a peer it lost or never reached: after `milliseconds`, doubling on each
    /// failed attempt up to `maxMilliseconds` (`ZMQ_RECONNECT_IVL`, `ZMQ_RECONNECT_IVL_MAX`; libzmq's default retries
    /// every 100 ms forever, which for a socket per thread per vanished peer is a storm of TCP connects).
    public func setReconnectInterval(milliseconds: Int32, maxMilliseconds: Int32) throws {
        try setOption(ZMQ_RECONNECT_IVL, milliseconds)
        try setOption(ZMQ_RECONNECT_IVL_MAX, maxMilliseconds)
    }

    /// Subscribes a SUB socket to messages whose first part starts with `prefix` (empty: everything).
    public func subscribe(_ prefix: [UInt8]) throws {
        try setOption(ZMQ_SUBSCRIBE, prefix)
    }

    /// How long a blocking receive waits before failing with `EAGAIN` (-1: forever).
    public func setReceiveTimeout(milliseconds: Int32) throws {
        try setOption(ZMQ_RCVTIMEO, milliseconds)
    }

    /// How long a blocking send waits before failing with `EAGAIN` (-1: forever).
    public func setSendTimeout(milliseconds: Int32) throws {
        try setOption(ZMQ_SNDTIMEO, milliseconds)
    }

    // MARK: - Messages

    /// Sends a multipart message atomically.
    /// - Parameter dontWait: fail instead of blocking when no peer has room.
    /// - Returns: `false` when the message was not sent because the call would block (`EAGAIN`),
    ///   which for `dontWait` means no peer has room (or none is connected).
    @discardableResult
    public func send(_ parts: [[UInt8]], dontWait: Bool = false) throws -> Bool {
        let handle = try socket("send")
        precondition(!parts.isEmpty, "a message has at least one part")
        for (index, part) in parts.enumerated() {
            var flags: Int32 = dontWait ? ZMQ_DONTWAIT : 0
            if index < parts.count - 1 { flags |= ZMQ_SNDMORE }
            while true {
                let result = part.withUnsafeBytes { zmq_send(handle, $0.baseAddress, $0.count, flags) }
                if result >= 0 { break }
                let error = ZMQError.last("send")
                if error.isInterrupted { continue }
                // libzmq queues multipart messages atomically: only the first part can fail with EAGAIN.
                if error.wouldBlock && index == 0 { return false }
                throw error
            }
        }
        return true
    }

    /// Receives one whole multipart message.
    /// - Parameter dontWait: return `nil` at once when nothing is queued.
    /// - Returns: the parts, or `nil` when nothing arrived (`dontWait`, or the receive timeout passed).
    public func receive(dontWait: Bool = false) throws -> [[UInt8]]? {
        try receiveMessage(dontWait: dontWait)?.parts
    }

    /// A received multipart message with the address of the peer that sent it.
    public struct Message {
        public var parts: [[UInt8]]
        /// The sender's IP address as libzmq saw it ("Peer-Address"), for TCP peers.
        public var peerAddress: String?
    }

    /// Receives one whole multipart message and its peer address.
    public func receiveMessage(dontWait: Bool = false) throws -> Message? {
        let handle = try socket("receive")
        var peerAddress: String?
        var parts: [[UInt8]] = []
        var message = zmq_msg_t()
        zmq_msg_init(&message)
        defer { zmq_msg_close(&message) }
        while true {
            let flags: Int32 = (dontWait && parts.isEmpty) ? ZMQ_DONTWAIT : 0
            let result = zmq_msg_recv(&message, handle, flags)
            if result < 0 {
                let error = ZMQError.last("receive")
                if error.isInterrupted { continue }
                if error.wouldBlock && parts.isEmpty { return nil }
                throw error
            }
            // Not the first part: on a ROUTER that is the identity frame libzmq makes, which has no metadata.
            if peerAddress == nil, let address = zmq_msg_gets(&message, "Peer-Address") {
                peerAddress = String(cString: address)
            }
            let size = zmq_msg_size(&message)
            if size > 0, let data = zmq_msg_data(&message) {
                parts.append([UInt8](UnsafeRawBufferPointer(start: data, count: size)))
            } else {
                parts.append([])
            }
            if zmq_msg_more(&message) == 0 { return Message(parts: parts, peerAddress: peerAddress) }
        }
    }

    /// Waits until this socket can receive, for at most `timeoutMilliseconds` (-1: forever).
    /// - Returns: whether a message is ready.
    public func waitForInput(timeoutMilliseconds: Int) throws -> Bool {
        try ZMQSocket.poll([self], timeoutMilliseconds: timeoutMilliseconds)[0]
    }

    /// Waits until at least one of `sockets` can receive.
    /// - Returns: for each socket, whether it has input.
    public static func poll(_ sockets: [ZMQSocket], timeoutMilliseconds: Int) throws -> [Bool] {
        var items = try sockets.map { socket in
            zmq_pollitem_t(socket: try socket.socket("poll"), fd: 0, events: Int16(ZMQ_POLLIN), revents: 0)
        }
        while true {
            let result = zmq_poll(&items, Int32(items.count), timeoutMilliseconds)
            if result >= 0 { break }
            let error = ZMQError.last("poll")
            if error.isInterrupted { continue }
            throw error
        }
        return items.map { $0.revents & Int16(ZMQ_POLLIN) != 0 }
    }
}
