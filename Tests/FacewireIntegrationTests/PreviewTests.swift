import FacewireImage
import FacewireProtocol
import FacewireRuntime
import Foundation
import Testing
import ZeroMQ

/// The capture node's preview socket (SPEC 7.5) with real processes: a view, here a plain ZeroMQ SUB, learns the
/// preview endpoint from the collector's Welcome (a Hello with role view), subscribes to the stream's topic and gets
/// `[topic][FrameHeader][JPEG]` with the very bytes the worker got. With CURVE, a view whose key the capture node does
/// not allow gets nothing while an allowed one gets frames.
extension IntegrationTests {
    @Suite("Live-view preview at the capture node", .serialized)
    struct Preview {
        /// A view's keys for CURVE: its key pair and the collector's public key.
        struct ViewKeys {
            var keyPair: CurveKeyPair
            var collectorKey: String
        }

        /// Says hello as a view to the collector at `control` every second until its Welcome lists `stream` with a
        /// preview endpoint (or as `accept` wants it); returns that capture's entry.
        static func discover(
            _ context: ZMQContext, control: String, stream: String, keys: ViewKeys? = nil,
            accept: (CaptureInfo) -> Bool = { !$0.previewEndpoint.isEmpty }
        ) async throws -> CaptureInfo {
            let dealer = try ZMQSocket(context: context, kind: .dealer)
            defer { dealer.close() }
            if let keys { try dealer.makeCurveClient(serverKey: keys.collectorKey, keyPair: keys.keyPair) }
            try dealer.setMaxMessageSize(Wire.maxControlMessageBytes)
            try dealer.connect(control)
            var hello = Hello()
            hello.dispatch = Wire.dispatchVersion
            hello.role = .view
            hello.nodeID = "preview-test"
            let clock = ContinuousClock()
            let deadline = clock.now + generousDeadline
            var lastWelcome = "none"
            while clock.now < deadline {
                _ = try dealer.send([try Envelope(.hello(hello)).serializedBytes()], dontWait: true)
                if try dealer.waitForInput(timeoutMilliseconds: 1000), let reply = try dealer.receive(dontWait: true),
                    case .welcome(let welcome) = try Envelope(part: reply[0]).body
                {
                    lastWelcome = "\(welcome.captures.map { "\($0.stream) \($0.previewEndpoint)" })"
                    if let info = welcome.captures.first(where: { $0.stream == stream && accept($0) }) { return info }
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            throw HarnessError("no Welcome listing \(stream) as expected (last: \(lastWelcome))")
        }

        /// A SUB on `endpoint` subscribed to `stream`'s topic (a CURVE client of `serverKey` with `keyPair`).
        static func subscriber(_ context: ZMQContext, _ endpoint: String, stream: String, curve: (serverKey: String, keyPair: CurveKeyPair)? = nil) throws -> ZMQSocket {
            let sub = try ZMQSocket(context: context, kind: .sub)
            if let curve { try sub.makeCurveClient(serverKey: curve.serverKey, keyPair: curve.keyPair) }
            try sub.setMaxMessageSize(Wire.maxFrameMessageBytes)
            try sub.subscribe(Wire.topic(forStream: stream))
            try sub.connect(endpoint)
            return sub
        }

        /// Reads `sub` until it has `count` messages (generous deadline); messages on `others` are collected meanwhile.
        static func receive(
            _ sub: ZMQSocket, count: Int, alongside others: [ZMQSocket] = []
        ) async throws -> (messages: [[[UInt8]]], others: [[[[UInt8]]]]) {
            var messages: [[[UInt8]]] = []
            var received = Array(repeating: [[[UInt8]]](), count: others.count)
            let clock = ContinuousClock()
            let deadline = clock.now + generousDeadline
            while messages.count < count {
                guard clock.now < deadline else { throw HarnessError("\(messages.count) of \(count) preview messages before the deadline") }
                _ = try ZMQSocket.poll([sub] + others, timeoutMilliseconds: 200)
                while let message = try sub.receive(dontWait: true) { messages.append(message) }
                for (index, other) in others.enumerated() {
                    while let message = try other.receive(dontWait: true) { received[index].append(message) }
                }
                await Task.yield()
            }
            return (messages, received)
        }

        /// Checks one preview message: three parts, the topic, a valid header of `stream`, a JPEG of the header's size.
        static func check(_ message: [[UInt8]], stream: String, decoder: JPEGDecoder) throws -> FrameHeader {
            try #require(message.count == 3, "a preview message has 3 parts, got \(message.count)")
            #expect(message[0] == Wire.topic(forStream: stream))
            let frame = try FrameMessage(parts: Array(message[1...]))
            #expect(frame.header.stream == stream)
            let image = try decoder.decode(frame.jpeg)
            #expect(image.width == Int(frame.header.width) && image.height == Int(frame.header.height))
            return frame.header
        }

        @Test("a view learns the preview endpoint from the Welcome and gets [topic][FrameHeader][JPEG]: the worker's bytes, in order",
              .timeLimit(.minutes(15)))
        func previewFromWelcome() async throws {
            let cluster = try TestCluster("preview")
            defer { cluster.cleanup() }
            let folder = cluster.directory.appendingPathComponent("frames")
            let files = try SyntheticFrames.writeFolder(folder, count: 30, width: 320, height: 240)
            let sourceJPEGs = Set(try files.map { [UInt8](try Data(contentsOf: $0)) })
            let (control, captureBind, _, _) = try await cluster.startStreamCluster(stream: "pv", workerArguments: ["--detector", "noop"])
            let capture = try cluster.facewire("capture", [
                "--role", "capture", "--source", folder.path, "--stream", "pv", "--bind", captureBind, "--collector", control,
                "--fps", "20", "--loop", "--log-level", "debug",
            ])
            let context = ZMQContext()
            let info = try await Self.discover(context, control: control, stream: "pv")
            #expect(info.previewEndpoint.hasPrefix("tcp://127.0.0.1:") && info.previewEndpoint != captureBind, "\(info.previewEndpoint)")
            let sub = try Self.subscriber(context, info.previewEndpoint, stream: "pv")
            defer { sub.close() }
            let (messages, _) = try await Self.receive(sub, count: 12)
            capture.stop()

            let decoder = try JPEGDecoder()
            var headers: [FrameHeader] = []
            for message in messages {
                headers.append(try Self.check(message, stream: "pv", decoder: decoder))
                #expect(sourceJPEGs.contains(message[2]), "the preview's JPEG is not one of the source files' bytes")
            }
            let seqs = headers.map(\.seq)
            #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }, "seqs not increasing: \(seqs)")
            #expect(Set(headers.map(\.epoch)).count == 1, "one epoch")
            // Only frames a worker took: every previewed seq was dispatched.
            let dispatched = Set(dispatchedFrames(inCaptureLog: capture.lines(.stderr)).map { UInt64($0.seq) })
            let undispatched = seqs.filter { !dispatched.contains($0) }
            #expect(undispatched.isEmpty, "previewed but never handed to a worker: \(undispatched)")
            let finished = try #require(capture.lines(.stderr).first { $0.contains("capture finished") })
            #expect(finished.contains("preview_frames_sent="), "\(finished)")
            #expect(finished.contains("preview_subscribed="), "the subscription was not seen: \(finished)")
            print("[preview] \(messages.count) messages, seqs \(seqs.first ?? 0)...\(seqs.last ?? 0)")
        }

        @Test("without a viewer nothing is sent; --preview-fps 0 binds no preview socket and announces none",
              .timeLimit(.minutes(15)))
        func noViewerNoPreview() async throws {
            let cluster = try TestCluster("preview-off")
            defer { cluster.cleanup() }
            let folder = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(folder, count: 10, width: 160, height: 120)
            let (control, captureBind, _, _) = try await cluster.startStreamCluster(stream: "pv", workerArguments: ["--detector", "noop"])
            let port = try freeLoopbackPorts(1)[0]
            let context = ZMQContext()
            var lastEpoch: UInt64?
            for (name, preview) in [("capture-on", ["--preview-bind", "tcp://127.0.0.1:\(port)"]), ("capture-off", ["--preview-fps", "0"])] {
                let capture = try cluster.facewire(name, [
                    "--role", "capture", "--source", folder.path, "--stream", "pv", "--bind", captureBind, "--collector", control,
                    "--fps", "max",
                ] + preview)
                #expect(try await capture.waitForExit() == 0, "\(capture.tail())")
                let log = capture.text(.stderr)
                let finished = try #require(capture.lines(.stderr).first { $0.contains("capture finished") })
                #expect(finished.contains("frames_sent=10"), "\(finished)")
                #expect(!finished.contains("preview_"), "no viewer, yet: \(finished)")
                #expect(log.contains(name == "capture-on" ? "preview=tcp://127.0.0.1:\(port) at most 10.0 fps" : "preview=off"), "\(log)")
                // What the collector tells views about this run (the next run's epoch is another).
                let info = try await Self.discover(context, control: control, stream: "pv") { $0.epoch != lastEpoch }
                lastEpoch = info.epoch
                #expect(info.previewEndpoint == (name == "capture-on" ? "tcp://127.0.0.1:\(port)" : ""), "\(info)")
            }
        }

        @Test("with CURVE a view whose key the capture node does not allow gets nothing; an allowed one gets frames",
              .timeLimit(.minutes(15)))
        func curveAllowList() async throws {
            let cluster = try TestCluster("preview-curve")
            defer { cluster.cleanup() }
            let keys = try CurveClusters.makeKeys(in: cluster.directory)
            func path(_ name: String) -> String { keys.appendingPathComponent(name).path }
            let binary = try Locations.facewireBinary()
            for name in ["view", "intruder"] {
                let made = try runCommand(binary, ["keygen", path(name)])
                try #require(made.status == 0, "\(made.output)")
            }
            // The collector lets both views ask where the capture nodes are; only "view" may watch.
            try FileManager.default.copyItem(atPath: path("view.pub"), toPath: path("collector-allow/view.pub"))
            try FileManager.default.copyItem(atPath: path("intruder.pub"), toPath: path("collector-allow/intruder.pub"))
            try FileManager.default.copyItem(atPath: path("view.pub"), toPath: path("capture-allow/view.pub"))
            let folder = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(folder, count: 20, width: 320, height: 240)

            let ports = try freeLoopbackPorts(3)
            let control = "tcp://127.0.0.1:\(ports[0])"
            func client(_ name: String) -> [String] { ["--curve-secret-key", path("\(name).key"), "--curve-server-key", path("collector.pub")] }
            _ = try await cluster.startCollector(
                control: control, publish: "tcp://127.0.0.1:\(ports[1])", ["--curve-secret-key", path("collector.key"), "--curve-allow", path("collector-allow")])
            _ = try await cluster.startWorker("good", control: control, ["--id", "good", "--detector", "noop"] + client("good"))
            let capture = try cluster.facewire("capture", [
                "--role", "capture", "--source", folder.path, "--stream", "sec", "--bind", "tcp://127.0.0.1:\(ports[2])",
                "--collector", control, "--fps", "20", "--loop", "--curve-allow", path("capture-allow"),
            ] + client("capture"))

            let context = ZMQContext()
            let collectorKey = try CurveKeyPair(file: path("collector.pub")).publicKey
            let view = try CurveKeyPair(file: path("view.key"))
            let intruder = try CurveKeyPair(file: path("intruder.key"))
            let info = try await Self.discover(context, control: control, stream: "sec", keys: ViewKeys(keyPair: view, collectorKey: collectorKey))
            #expect(info.curvePublicKey == (try CurveKeyPair(file: path("capture.pub")).publicKey))
            // The intruder knows everything public (endpoint, the capture node's key) and subscribes first.
            let bad = try Self.subscriber(context, info.previewEndpoint, stream: "sec", curve: (info.curvePublicKey, intruder))
            defer { bad.close() }
            let good = try Self.subscriber(context, info.previewEndpoint, stream: "sec", curve: (info.curvePublicKey, view))
            defer { good.close() }
            let (messages, others) = try await Self.receive(good, count: 8, alongside: [bad])
            capture.stop()

            let decoder = try JPEGDecoder()
            for message in messages { _ = try Self.check(message, stream: "sec", decoder: decoder) }
            #expect(others[0].isEmpty, "the intruder received \(others[0].count) messages while the allowed view received \(messages.count)")
            let log = capture.text(.stderr)
            #expect(log.contains("refused a view whose key is not allowed") && log.contains(intruder.publicKey), "\(capture.tail())")
        }
    }
}

extension IntegrationTests.Preview {
    @Test("preview flags: clear errors for a preview option without a preview, a transport with no default, a bad rate")
    func flagErrors() throws {
        let binary = try Locations.facewireBinary()
        let cases: [([String], String)] = [
            (["capture", "--source", "/tmp", "--preview-fps", "0", "--preview-bind", "tcp://*:1"], "need a preview socket"),
            (["capture", "--source", "/tmp", "--preview-fps", "0", "--preview-advertise", "tcp://h:1"], "need a preview socket"),
            (["capture", "--source", "/tmp", "--bind", "inproc://frames"], "give --preview-bind"),
            (["capture", "--source", "/tmp", "--preview-fps", "nan"], "--preview-fps must be 0...1000"),
            (["capture", "--source", "/tmp", "--preview-fps", "5000"], "--preview-fps must be 0...1000"),
            (["local", "--preview-fps", "1e9"], "--preview-fps must be 0...1000"),
        ]
        for (arguments, expected) in cases {
            let result = try runCommand(binary, arguments)
            #expect(result.status != 0, "\(arguments) was accepted")
            #expect(result.output.contains(expected), "\(arguments): \(result.output)")
        }
    }
}
