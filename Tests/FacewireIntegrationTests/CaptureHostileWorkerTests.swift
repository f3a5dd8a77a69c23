import FacewireProtocol
import FacewireRuntime
import Foundation
import Testing
import ZeroMQ

/// What a worker sends a capture node is bounded: Readys that are malformed, from one connection too many, or with a
/// worker id far too long, against a real capture node over TCP.
extension IntegrationTests {
    @Suite("A capture node and hostile workers")
    struct CaptureHostileWorkers {
        /// `--max-workers 2`, one frame every 2 s. A takes seq 0; B and H (whose worker id is 3000 bytes) then hold
        /// the two credits, so D is refused; three connections send a wrong version, bytes that are no Ready, and a
        /// message of three parts. B, H and D repeat Ready every 500 ms until they get a frame.
        @Test("malformed Readys, one connection too many and an overlong worker id: refused by name, the others served",
              .timeLimit(.minutes(15)))
        func hostileReadys() async throws {
            let cluster = try TestCluster("hostile-ready")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: 3, width: 160, height: 120)
            let ports = try freeLoopbackPorts(1)
            let endpoint = "tcp://127.0.0.1:\(ports[0])"
            let capture = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", "hostile", "--bind", endpoint,
                "--fps", "0.5", "--frames", "3", "--max-workers", "2",
            ])
            try await capture.waitForLine(containing: "capture publishing")
            let context = ZMQContext()
            func connect() throws -> ZMQSocket {
                let socket = try ZMQSocket(context: context, kind: .dealer)
                try socket.setLinger(milliseconds: 0)
                try socket.connect(endpoint)
                return socket
            }
            func ready(_ worker: String) throws -> [UInt8] { try Ready(worker: worker).serializedBytes() }
            /// Frames received on `socket` within `milliseconds`.
            func framesReceived(on socket: ZMQSocket, within milliseconds: Int) throws -> Int {
                var count = 0
                if try socket.waitForInput(timeoutMilliseconds: milliseconds) {
                    while try socket.receive(dontWait: true) != nil { count += 1 }
                }
                return count
            }

            let a = try connect()
            defer { a.close() }
            _ = try a.send([try ready("a")])
            #expect(try framesReceived(on: a, within: 20_000) == 1, "the first worker gets seq 0")

            let long = String(repeating: "x", count: 3000)
            let b = try connect(), h = try connect(), d = try connect()
            defer { [b, h, d].forEach { $0.close() } }
            _ = try b.send([try ready("b")])
            try await Task.sleep(for: .milliseconds(300))  // order only: B, then H, then D
            _ = try h.send([try ready(long)])
            try await Task.sleep(for: .milliseconds(300))
            _ = try d.send([try ready("d")])
            var badVersion = Ready(worker: "v")
            badVersion.version = 2
            let hostile = [[try badVersion.serializedBytes()], [[0xFF, 0xFF, 0xFF]], [try ready("p"), [1], [2]]]
            var others: [ZMQSocket] = []
            defer { others.forEach { $0.close() } }
            for parts in hostile {
                let socket = try connect()
                others.append(socket)
                _ = try socket.send(parts)
            }

            var received: [String: Int] = [:]
            let deadline = Date().addingTimeInterval(60)
            while capture.isRunning, Date() < deadline {
                for (name, socket, worker) in [("b", b, "b"), ("h", h, long), ("d", d, "d")] where received[name, default: 0] == 0 {
                    received[name, default: 0] += try framesReceived(on: socket, within: 100)
                    if received[name, default: 0] == 0 { _ = try socket.send([try ready(worker)]) }  // renew the credit
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(try await capture.waitForExit() == 0)
            for (name, socket) in [("b", b), ("h", h), ("d", d)] {  // what arrived as the node finished
                received[name, default: 0] += try framesReceived(on: socket, within: 500)
            }
            #expect(received["b"] == 1 && received["h"] == 1, "B and H (overlong id) each get a frame: \(received)")
            #expect(received["d", default: 0] == 0, "D came after the cap was reached and after H: \(received)")
            for other in others { #expect(try framesReceived(on: other, within: 0) == 0) }
            let finished = try #require(capture.lines(.stderr).first { $0.contains("capture finished") })
            #expect(finished.contains("ready_malformed=3"), "\(finished)")
            #expect(finished.contains("credits_refused_cap="), "\(finished)")
            #expect(finished.contains("ready_worker_id_truncated="), "\(finished)")
            #expect(capture.lines(.stderr).contains { $0.contains("--max-workers 2") }, "the refusal is logged")
        }
    }
}
