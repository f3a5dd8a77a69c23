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
        /// `--max-workers 3`, one frame every 2 s, a real collector pairing threads played by hand. A, H (whose id is
        /// 3000 bytes) and B attach; D is one thread too many. Three more connections send a Ready of dispatch protocol
        /// 1, bytes that are no Ready, and a message of three parts. Every thread says Idle to the collector.
        @Test("malformed Readys, protocol 1, one thread too many and an overlong id: refused by name, the others served",
              .timeLimit(.minutes(15)))
        func hostileReadys() async throws {
            let cluster = try TestCluster("hostile-ready")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: 3, width: 160, height: 120)
            let ports = try freeLoopbackPorts(3)
            let endpoint = "tcp://127.0.0.1:\(ports[0])"
            let control = "tcp://127.0.0.1:\(ports[1])"
            let collector = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[2])")
            let context = ZMQContext()
            let long = String(repeating: "x", count: 3000)
            let threads = try ["a", long, "b", "d"].map { try HandThread($0, context: context, capture: endpoint, collector: control) }
            defer { threads.forEach { $0.close() } }
            let capture = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", "hostile", "--bind", endpoint, "--collector", control,
                "--fps", "0.5", "--frames", "3", "--max-workers", "3",
            ])
            try await capture.waitForLine(containing: "capture publishing")
            for thread in threads {
                try thread.attach()
                try await Task.sleep(for: .milliseconds(300))  // order only: a, the long one, b, then d
            }
            var others: [ZMQSocket] = []
            defer { others.forEach { $0.close() } }
            var credit = Ready(worker: "v")
            credit.version = 1
            for parts in [[try credit.serializedBytes()], [[0xFF, 0xFF, 0xFF]], [try Ready(worker: "p").serializedBytes(), [1], [2]]] {
                let socket = try ZMQSocket(context: context, kind: .dealer)
                try socket.setLinger(milliseconds: 0)
                try socket.connect(endpoint)
                others.append(socket)
                _ = try socket.send(parts)
            }
            // Each thread keeps its attachment, and is idle until it has a frame, then busy for good (it never answers):
            // at most one frame each.
            var received: [String: Int] = [:]
            let deadline = Date().addingTimeInterval(60)
            while capture.isRunning, Date() < deadline {
                for thread in threads {
                    try thread.attach()
                    guard received[thread.name, default: 0] == 0 else { continue }
                    received[thread.name, default: 0] += try thread.receive(within: 50)
                    if received[thread.name, default: 0] == 0 { try thread.idle() }
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(try await capture.waitForExit() == 0)
            for thread in threads { received[thread.name, default: 0] += try thread.receive(within: 500) }
            #expect(received["a"] == 1 && received["b"] == 1, "A and B each get a frame: \(received.mapValues { $0 })")
            #expect(received[long, default: 0] == 0, "the overlong id is truncated at the node and refused by the collector")
            #expect(received["d", default: 0] == 0, "D came after the cap was reached")
            for other in others {
                #expect(try other.waitForInput(timeoutMilliseconds: 0) == false)
            }
            let finished = try #require(capture.lines(.stderr).first { $0.contains("capture finished") })
            #expect(finished.contains("ready_malformed=2"), "\(finished)")
            #expect(finished.contains("ready_refused_version=1"), "\(finished)")
            #expect(finished.contains("attachments_refused_cap="), "\(finished)")
            #expect(finished.contains("ready_worker_id_truncated="), "\(finished)")
            #expect(finished.contains("assignments_unattached="), "D (or the truncated id) was assigned and handed back: \(finished)")
            #expect(capture.lines(.stderr).contains { $0.contains("--max-workers 3") }, "the refusal is logged")
            #expect(capture.lines(.stderr).contains { $0.contains("dispatch protocol") }, "the protocol-1 Ready is logged")
            collector.signal(SIGTERM)
            _ = try await collector.waitForExit()
            let stopped = collector.lines(.stderr).joined(separator: "\n")
            #expect(stopped.contains("dispatch_idle_rejected_worker="), "the collector refused the overlong id by name")
        }
    }
}
