import FacewireProtocol
import FacewireTransport
import Foundation
import Testing
import ZeroMQ

/// What a peer at the collector's endpoint can make a ``CollectorSession`` hold: every value it sends is hostile.
@Suite("CollectorSession: what the collector's endpoint may send", .serialized)
struct CollectorSessionTests {
    static func bytes(_ body: Envelope.OneOf_Body) throws -> [UInt8] {
        try Envelope(body).serializedBytes()
    }

    @Test("the Welcome's results endpoint: a wildcard host becomes the collector's; a hostile one is refused")
    func publishEndpoint() throws {
        let context = ZMQContext()
        defer { context.shutdown() }
        // Nothing listens there and nothing is sent: the session only needs the collector's host.
        let session = try CollectorSession(context: context, collector: "tcp://127.0.0.1:9", security: nil, purpose: .discovery)
        defer { session.close() }
        var welcome = Welcome()
        welcome.publishEndpoint = "tcp://*:5557"
        #expect(session.publishEndpoint(of: welcome) == "tcp://127.0.0.1:5557")
        welcome.publishEndpoint = "ipc:///tmp/facewire-results"
        #expect(session.publishEndpoint(of: welcome) == "ipc:///tmp/facewire-results")
        let hostile = [
            "", "tcp://", "tcp://h:0", "tcp://h:65536", "tcp://h:99999999999999999999", "udp://h:1", "tcp://h :1",
            "tcp://h:1\u{0}", "inproc://x", "ipc://", "tcp://" + String(repeating: "h", count: 10_000) + ":1",
        ]
        for endpoint in hostile {
            welcome.publishEndpoint = endpoint
            #expect(session.publishEndpoint(of: welcome) == nil, "\(endpoint.prefix(40))")
        }
    }

    @Test("a reply is a Welcome or a ResetReply; anything else, of any shape, is malformed")
    func replies() throws {
        var welcome = Welcome()
        welcome.publishEndpoint = "tcp://*:5557"
        guard case .welcome(let read) = CollectorSession.reply([try Self.bytes(.welcome(welcome))]) else {
            Issue.record("a Welcome was not read as one")
            return
        }
        #expect(read.publishEndpoint == "tcp://*:5557")
        var reply = ResetReply()
        reply.requestID = "r"
        guard case .resetReply(let answer) = CollectorSession.reply([try Self.bytes(.resetReply(reply))]) else {
            Issue.record("a ResetReply was not read as one")
            return
        }
        #expect(answer.requestID == "r")
        var hello = Hello()
        hello.nodeID = "x"
        let welcomeBytes = try Self.bytes(.welcome(welcome))
        let hostile: [[[UInt8]]] = [
            [], [[]], [welcomeBytes, welcomeBytes], [[0xff, 0xff, 0xff, 0xff]], [[UInt8](repeating: 0x0a, count: 4096)],
            [try Self.bytes(.hello(hello))], [Array(welcomeBytes.dropLast())],
        ]
        for parts in hostile {
            guard case .malformed = CollectorSession.reply(parts) else {
                Issue.record("\(parts.map(\.count)) bytes read as a reply")
                continue
            }
        }
    }

    /// The collector's end of the connection: a ROUTER that learns the session's identity from its first message.
    final class FakeCollector {
        let context = ZMQContext()
        let router: ZMQSocket
        let endpoint: String

        init() throws {
            router = try ZMQSocket(context: context, kind: .router)
            endpoint = try router.bind("tcp://127.0.0.1:*")
        }

        /// The identity of the next peer that sends a message (waits up to 10 s).
        func identity() throws -> [UInt8] {
            guard try router.waitForInput(timeoutMilliseconds: 10_000), let parts = try router.receive(dontWait: true), parts.count >= 1
            else { throw ZMQError(code: EAGAIN, operation: "no message from the session") }
            return parts[0]
        }

        deinit { router.close() }
    }

    /// Reads what reached the session within `milliseconds`: the sizes of the messages.
    static func received(_ session: CollectorSession, within milliseconds: Int) throws -> [Int] {
        var sizes: [Int] = []
        let deadline = Date().addingTimeInterval(Double(milliseconds) / 1000)
        while Date() < deadline {
            guard try session.socket.waitForInput(timeoutMilliseconds: 50) else { continue }
            while let parts = try session.socket.receive(dontWait: true) { sizes.append(parts.reduce(0) { $0 + $1.count }) }
        }
        return sizes
    }

    @Test("with two collectors, a capture node's send leaves the assignment that arrived for it to be read")
    func aSendKeepsWhatTheCallerReads() throws {
        let active = try FakeCollector()
        let other = try FakeCollector()
        let session = try CollectorSession(
            context: active.context, collector: "\(active.endpoint),\(other.endpoint)", security: nil, purpose: .captureControl)
        defer { session.close() }
        #expect(session.send(bytes: [1]))
        let identity = try active.identity()
        var assignment = Assignment()
        assignment.worker = "w/t0"
        assignment.number = 1
        _ = try active.router.send([identity, try Envelope(.assignment(assignment)).serializedBytes()])
        #expect(try session.sockets[0].waitForInput(timeoutMilliseconds: 10_000))
        // A request goes out before the node reads its assignments (CaptureNode does both in one pass).
        #expect(session.send(bytes: [2]))
        guard case .assignment(let read)? = try session.receiveNow() else {
            Issue.record("the assignment was not there to read")
            return
        }
        #expect(read.worker == "w/t0")
    }

    @Test(
        "every purpose drops a peer that sends a message over Wire.maxControlMessageBytes before it is allocated",
        arguments: [CollectorSession.Purpose.discovery, .request, .captureControl, .results])
    func oversizedMessagesAreRefused(purpose: CollectorSession.Purpose) throws {
        let collector = try FakeCollector()
        let session = try CollectorSession(
            context: collector.context, collector: collector.endpoint, security: nil, purpose: purpose)
        defer { session.close() }
        #expect(session.send(bytes: [1, 2, 3]))
        let identity = try collector.identity()
        let limit = Int(Wire.maxControlMessageBytes)
        // Within the bound: delivered (so the test could see an oversized one too).
        _ = try collector.router.send([identity, [UInt8](repeating: 7, count: 100)])
        #expect(try Self.received(session, within: 1000) == [100])
        // Over it by one byte: the connection is dropped instead, nothing reaches the session.
        _ = try collector.router.send([identity, [UInt8](repeating: 7, count: limit + 1)])
        #expect(try Self.received(session, within: 1000).isEmpty)
    }
}
