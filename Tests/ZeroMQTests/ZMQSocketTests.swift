import CZeroMQ
import Foundation
import Testing

@testable import ZeroMQ

@Suite("ZeroMQ sockets over loopback TCP")
struct ZMQSocketTests {
    let context = ZMQContext()

    @Test("binding port * reports the port the kernel chose")
    func bindReportsPort() throws {
        let socket = try ZMQSocket(context: context, kind: .pull)
        let endpoint = try socket.bind("tcp://127.0.0.1:*")
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        let port = Int(endpoint.split(separator: ":").last ?? "") ?? 0
        #expect(port > 0)
    }

    @Test("the reconnect backoff is set; a peer bound after the connect is still reached")
    func reconnectBackoff() throws {
        let dealer = try ZMQSocket(context: context, kind: .dealer)
        try dealer.setReconnectInterval(milliseconds: 100, maxMilliseconds: 5000)
        #expect(try dealer.option(ZMQ_RECONNECT_IVL) == 100)
        #expect(try dealer.option(ZMQ_RECONNECT_IVL_MAX) == 5000)
        // Bind a port, free it, connect to it (refused, retried), bind it again: the message arrives.
        let probe = try ZMQSocket(context: context, kind: .router)
        let endpoint = try probe.bind("tcp://127.0.0.1:*")
        probe.close()
        try dealer.connect(endpoint)
        let router = try ZMQSocket(context: context, kind: .router)
        // (The probe's port is released by libzmq's I/O thread shortly after close.)
        var bound = false
        for _ in 0..<100 where !bound {
            bound = (try? router.bind(endpoint)) != nil
            if !bound { usleep(20_000) }
        }
        try #require(bound, "could not bind \(endpoint) again")
        try router.setReceiveTimeout(milliseconds: 20_000)
        _ = try dealer.send([[1, 2, 3]])
        let received = try router.receive()
        #expect(received?.last == [1, 2, 3])
    }

    @Test("multipart messages arrive whole, in order, with empty parts kept")
    func multipartRoundTrip() throws {
        let pull = try ZMQSocket(context: context, kind: .pull)
        let endpoint = try pull.bind("tcp://127.0.0.1:*")
        let push = try ZMQSocket(context: context, kind: .push)
        try push.connect(endpoint)
        let big = [UInt8]((0..<200_000).map { UInt8($0 % 251) })
        for index in 0..<5 {
            #expect(try push.send([[UInt8(index)], [], big]))
        }
        for index in 0..<5 {
            let parts = try #require(try pull.receive())
            #expect(parts.count == 3)
            #expect(parts[0] == [UInt8(index)])
            #expect(parts[1].isEmpty)
            #expect(parts[2] == big)
        }
    }

    @Test("a non-blocking receive with nothing queued returns nil, a timed receive times out")
    func emptyReceive() throws {
        let pull = try ZMQSocket(context: context, kind: .pull)
        _ = try pull.bind("tcp://127.0.0.1:*")
        #expect(try pull.receive(dontWait: true) == nil)
        try pull.setReceiveTimeout(milliseconds: 50)
        #expect(try pull.receive() == nil)
        #expect(try pull.waitForInput(timeoutMilliseconds: 10) == false)
    }

    @Test("a non-blocking send with no peer reports that it would block")
    func sendWithoutPeer() throws {
        let push = try ZMQSocket(context: context, kind: .push)
        _ = try push.bind("tcp://127.0.0.1:*")
        #expect(try push.send([[1, 2, 3]], dontWait: true) == false)
    }

    @Test("ROUTER sees the sender's identity and peer address, and can answer it")
    func routerDealer() throws {
        let router = try ZMQSocket(context: context, kind: .router)
        let endpoint = try router.bind("tcp://127.0.0.1:*")
        let dealer = try ZMQSocket(context: context, kind: .dealer)
        try dealer.setRoutingID(Array("worker-1".utf8))
        try dealer.connect(endpoint)
        try dealer.send([Array("hello".utf8)])
        let message = try #require(try router.receiveMessage())
        #expect(message.parts == [Array("worker-1".utf8), Array("hello".utf8)])
        #expect(message.peerAddress == "127.0.0.1")
        try router.send([message.parts[0], Array("welcome".utf8)])
        #expect(try dealer.receive() == [Array("welcome".utf8)])
    }

    @Test("a mandatory ROUTER refuses to send to an unknown peer instead of dropping silently")
    func routerMandatory() throws {
        let router = try ZMQSocket(context: context, kind: .router)
        try router.setRouterMandatory(true)
        _ = try router.bind("tcp://127.0.0.1:*")
        #expect(throws: ZMQError.self) {
            try router.send([Array("nobody".utf8), [1]], dontWait: true)
        }
    }

    @Test("a message over the size limit is refused before it is delivered")
    func maxMessageSize() throws {
        let pull = try ZMQSocket(context: context, kind: .pull)
        try pull.setMaxMessageSize(1000)
        let endpoint = try pull.bind("tcp://127.0.0.1:*")
        let push = try ZMQSocket(context: context, kind: .push)
        try push.connect(endpoint)
        try push.send([[UInt8](repeating: 7, count: 5000)])
        try pull.setReceiveTimeout(milliseconds: 300)
        #expect(try pull.receive() == nil)
    }

    @Test("shutting the context down wakes a blocked receive with ETERM")
    func shutdownWakesReceive() async throws {
        let context = ZMQContext()
        let pull = try ZMQSocket(context: context, kind: .pull)
        _ = try pull.bind("tcp://127.0.0.1:*")
        let box = SocketBox(pull)
        let receiver = Task.detached { () -> Bool in
            do {
                _ = try box.socket.receive()
                return false
            } catch let error as ZMQError {
                return error.isTerminated
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        context.shutdown()
        #expect(try await receiver.value)
        pull.close()
    }

    @Test("errors carry the failing operation and libzmq's description")
    func errorDescription() throws {
        let socket = try ZMQSocket(context: context, kind: .pull)
        let error = try #require(throws: ZMQError.self) { try socket.bind("tcp://nonsense") }
        #expect(error.description.contains("bind tcp://nonsense"))
    }
}

/// Hands a socket to the one task that will use it (sockets are not thread-safe; this test uses it from one).
private struct SocketBox: @unchecked Sendable {
    let socket: ZMQSocket
    init(_ socket: ZMQSocket) { self.socket = socket }
}
