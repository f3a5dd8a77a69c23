import FacewireImage
import FacewireProtocol
import FacewireRuntime
import Foundation
import Testing
import ZeroMQ

/// A corpus of malformed messages sent to real nodes over real sockets: the test plays a capture node towards a
/// worker, and a peer towards the collector. Each bad message must be rejected and counted under its name, and the
/// node must go on serving (a good message afterwards is handled).
extension IntegrationTests {
    @Suite("Malformed input corpus")
    struct MalformedInput {
        static func header(stream: String = "corpus", seq: UInt64, version: UInt32 = Wire.version) throws -> [UInt8] {
            var header = FrameHeader()
            header.version = version
            header.stream = stream
            header.epoch = 1
            header.seq = seq
            header.captureTimeUs = Clock.wallMicroseconds()
            header.width = 64
            header.height = 48
            return try header.serializedBytes()
        }

        static func jpeg() throws -> [UInt8] {
            let pixels = [UInt8](repeating: 128, count: 64 * 48 * 3)
            return try JPEGEncoder().encode(PixelImage(width: 64, height: 48, format: .bgr, bytes: pixels))
        }

        /// A real JPEG whose frame header claims 60000×60000 pixels (a decompression bomb's lie).
        static func lyingJPEG() throws -> [UInt8] {
            var bytes = try jpeg()
            var i = 2
            while i + 9 < bytes.count {
                if bytes[i] == 0xFF, bytes[i + 1] == 0xC0 {
                    bytes[i + 5] = 0xEA; bytes[i + 6] = 0x60  // height 60000
                    bytes[i + 7] = 0xEA; bytes[i + 8] = 0x60  // width 60000
                    return bytes
                }
                i += 2 + (Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]))
            }
            throw HarnessError("no SOF0 in the sample JPEG")
        }

        /// The value of `name` in the Prometheus text of the node at `port` (0 when absent).
        static func metric(_ port: Int, _ name: String) throws -> Double {
            sample(try httpGet(port: port, path: "/metrics").body, name) ?? 0
        }

        @Test("a worker rejects malformed frames by name, answers bad images with errors, and keeps working",
              .timeLimit(.minutes(15)))
        func workerCorpus() async throws {
            let cluster = try TestCluster("corpus-worker")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(5)
            let control = "tcp://127.0.0.1:\(ports[0])"
            _ = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[1])")
            // The test is the capture node: a ROUTER the worker connects to (given statically).
            let context = ZMQContext()
            let router = try ZMQSocket(context: context, kind: .router)
            let first = router
            defer { router.close() }
            let captureEndpoint = try router.bind("tcp://127.0.0.1:\(ports[2])")
            // A second capture node, to show the worker serving on after the first one broke the size limit.
            let other = try ZMQSocket(context: context, kind: .router)
            defer { other.close() }
            let otherEndpoint = try other.bind("tcp://127.0.0.1:\(ports[4])")
            let metricsPort = ports[3]
            let worker = try await cluster.startWorker(control: control, [
                "--capture", captureEndpoint, "--capture", otherEndpoint, "--metrics-port", String(metricsPort), "--metrics-host", "127.0.0.1",
            ])

            /// Waits for the worker's Ready, then sends `parts` to it.
            func sendOnReady(_ parts: [[UInt8]], via router: ZMQSocket? = nil) throws {
                let router = router ?? first
                let deadline = Date().addingTimeInterval(20)
                while Date() < deadline {
                    guard try router.waitForInput(timeoutMilliseconds: 200), let message = try router.receive(dontWait: true),
                        message.count == 2
                    else { continue }
                    _ = try router.send([message[0]] + parts)
                    return
                }
                throw HarnessError("no Ready from the worker\n\(worker.tail(.stderr))")
            }
            let good = try Self.jpeg()
            let corpus: [(String, [[UInt8]])] = [
                ("one part", [try Self.header(seq: 0)]),
                ("three parts", [try Self.header(seq: 1), good, good]),
                ("random header bytes", [Array((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }), good]),
                ("truncated header", [Array(try Self.header(seq: 3).prefix(5)), good]),
                ("version 2", [try Self.header(seq: 4, version: 2), good]),
                ("invalid stream id", [try Self.header(stream: "bad stream!", seq: 5), good]),
                ("oversized header", [try Self.header(seq: 6) + [UInt8](repeating: 0, count: 5000), good]),
                ("empty image", [try Self.header(seq: 7), []]),
            ]
            for (_, parts) in corpus { try sendOnReady(parts) }
            let images: [(String, [UInt8])] = [
                ("lying dimensions", try Self.lyingJPEG()),
                ("truncated JPEG", Array(good.prefix(good.count / 3))),
                ("random bytes", Array((0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })),
            ]
            for (index, (_, image)) in images.enumerated() { try sendOnReady([try Self.header(seq: UInt64(10 + index)), image]) }
            try sendOnReady([try Self.header(seq: 20), good])

            // Wait until the worker answered everything, then read its counters.
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline, try Self.metric(metricsPort, "facewire_frames_processed_total") < 1 {
                try await Task.sleep(for: .milliseconds(100))
            }
            let text = try httpGet(port: metricsPort, path: "/metrics").body
            print("[corpus] worker: " + text.split(separator: "\n").filter { $0.hasPrefix("facewire_frames") }.joined(separator: ", "))
            #expect(sample(text, "facewire_frames_malformed_total") == 8)
            #expect(sample(text, "facewire_frames_rejected_malformed_total") == 5, "parts, bytes, truncation, empty image")
            #expect(sample(text, "facewire_frames_rejected_unsupportedVersion_total") == 1)
            #expect(sample(text, "facewire_frames_rejected_invalidStream_total") == 1)
            #expect(sample(text, "facewire_frames_rejected_tooLarge_total") == 1)
            #expect(sample(text, "facewire_frames_failed_total") == 3, "the three bad images are answered as errors")
            #expect(sample(text, "facewire_frames_processed_total") == 1, "the good frame after the corpus")
            #expect(worker.isRunning)

            // A message over the worker's 16 MiB limit: libzmq refuses it from its announced length, before allocating,
            // and cuts that capture node off for good (it does not reconnect a peer that broke the protocol). The
            // worker serves on: the other capture node's next frame is processed.
            try sendOnReady([try Self.header(seq: 21), [UInt8](repeating: 0xFF, count: 17 << 20)])
            try sendOnReady([try Self.header(seq: 22), good], via: other)
            while Date() < deadline.addingTimeInterval(20), try Self.metric(metricsPort, "facewire_frames_processed_total") < 2 {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try Self.metric(metricsPort, "facewire_frames_processed_total") == 2, "the worker serves on after an oversized message")
            #expect(worker.isRunning)
        }

        @Test("the collector rejects malformed control messages by name and keeps serving", .timeLimit(.minutes(15)))
        func collectorCorpus() async throws {
            let cluster = try TestCluster("corpus-collector")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(3)
            let control = "tcp://127.0.0.1:\(ports[0])"
            let collector = try await cluster.startCollector(
                control: control, publish: "tcp://127.0.0.1:\(ports[1])", ["--metrics-port", String(ports[2]), "--metrics-host", "127.0.0.1"])
            let context = ZMQContext()
            let dealer = try ZMQSocket(context: context, kind: .dealer)
            defer { dealer.close() }
            try dealer.connect(control)
            var badResult = FrameResult()
            badResult.stream = "no spaces allowed"
            var noBody = Envelope()
            noBody.version = 1
            var oldVersion = Envelope(.result(FrameResult()))
            oldVersion.version = 0
            let corpus: [[[UInt8]]] = [
                [[]],  // empty
                [Array("not protobuf at all".utf8)],
                [Array((try Envelope(.result(badResult)).serializedBytes() as [UInt8]).prefix(4))],  // truncated
                [try oldVersion.serializedBytes()],  // version 0
                [try noBody.serializedBytes()],  // no body
                [try Envelope(.result(badResult)).serializedBytes(), []],  // two parts
                [try Envelope(.result(badResult)).serializedBytes()],  // invalid stream id
            ]
            for parts in corpus { _ = try dealer.send(parts) }
            // Over the 1 MiB control limit: the connection is dropped before allocation; the DEALER reconnects.
            _ = try dealer.send([[UInt8](repeating: 1, count: 2 << 20)])
            try await Task.sleep(for: .milliseconds(500))

            // Still serving: a tail's hello is answered with a Welcome.
            let asker = try ZMQSocket(context: context, kind: .dealer)
            defer { asker.close() }
            try asker.connect(control)
            var hello = Hello()
            hello.dispatch = Wire.dispatchVersion
            hello.role = .tail
            _ = try asker.send([try Envelope(.hello(hello)).serializedBytes()])
            #expect(try asker.waitForInput(timeoutMilliseconds: 5000), "no Welcome after the corpus")
            let reply = try #require(try asker.receive(dontWait: true))
            guard case .welcome = try Envelope(part: reply[0]).body else {
                Issue.record("expected a Welcome")
                return
            }
            let text = try httpGet(port: ports[2], path: "/metrics").body
            print("[corpus] collector: " + text.split(separator: "\n").filter { $0.hasPrefix("facewire_control") || $0.hasPrefix("facewire_invalid") }.joined(separator: ", "))
            #expect(sample(text, "facewire_control_rejected_unsupportedVersion_total") == 2, "empty and version 0")
            #expect(sample(text, "facewire_control_rejected_malformed_total") == 2, "garbage and truncated")
            #expect(sample(text, "facewire_control_rejected_parts_total") == 1)
            #expect(sample(text, "facewire_control_rejected_missingBody_total") == 1, "an envelope without a body")
            #expect(sample(text, "facewire_invalid_stream_total") == 1)
            #expect(collector.isRunning)
        }
    }
}
