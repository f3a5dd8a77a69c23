import FacewireProtocol
import FacewireRuntime
import Foundation
import Logging
import Testing
import ZeroMQ

@testable import FacewireCollector

/// A real ``CollectorNode`` on its own thread with real loopback sockets; the test plays the capture node and the
/// workers (a DEALER sending protocol envelopes) and a subscriber (SUB), so what the collector publishes is
/// exactly determined by what the test sends.
final class CollectorHarness: @unchecked Sendable {
    let node: CollectorNode
    let stop = StopToken()
    let context = ZMQContext()
    let dealer: ZMQSocket
    let subscriber: ZMQSocket
    private let thread: Thread
    private let done = DispatchSemaphore(value: 0)

    init(statisticsIntervalSeconds: Double = 0, maxDelayMilliseconds: Int = 1000) throws {
        var logger = Logger(label: "test.collector")
        logger.logLevel = .warning
        node = CollectorNode(
            configuration: CollectorConfiguration(
                bind: "tcp://127.0.0.1:*", publish: "tcp://127.0.0.1:*", maxDelayMilliseconds: maxDelayMilliseconds,
                statisticsIntervalSeconds: statisticsIntervalSeconds),
            logger: logger)
        let endpoints = EndpointBox()
        let ready = DispatchSemaphore(value: 0)
        let (node, stop, done) = (node, stop, done)
        thread = Thread {
            do {
                try node.run(stop: stop) { control, publish in
                    endpoints.set(control, publish)
                    ready.signal()
                }
            } catch {
                endpoints.set("error: \(error)", "")
                ready.signal()
            }
            done.signal()
        }
        thread.start()
        ready.wait()
        let (control, publish) = endpoints.get()
        guard control.hasPrefix("tcp://") else { throw NodeError("the collector did not start: \(control)") }
        dealer = try ZMQSocket(context: context, kind: .dealer)
        try dealer.connect(control)
        subscriber = try ZMQSocket(context: context, kind: .sub)
        try subscriber.subscribe([])
        try subscriber.connect(publish)
        // The collector's heartbeat (every 200 ms) shows the subscription is live.
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if try subscriber.waitForInput(timeoutMilliseconds: 100), try subscriber.receive(dontWait: true) != nil { return }
        }
        throw NodeError("no heartbeat from the collector")
    }

    func send(_ body: Envelope.OneOf_Body) throws {
        _ = try dealer.send([try Envelope(body).serializedBytes()])
    }

    /// The next envelope the collector sends back to the dealer.
    func reply(timeoutSeconds: Double = 20) throws -> Envelope {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while Date() < deadline {
            if try dealer.waitForInput(timeoutMilliseconds: 100), let parts = try dealer.receive(dontWait: true), parts.count == 1,
                let envelope = try? Envelope(part: parts[0]), !isWelcome(envelope)
            {
                return envelope
            }
        }
        throw NodeError("no reply from the collector")
    }

    private func isWelcome(_ envelope: Envelope) -> Bool {
        if case .welcome = envelope.body { return true }
        return false
    }

    /// Stream messages (heartbeats left out) until `until` says stop.
    func messages(timeoutSeconds: Double = 30, until: ([StreamMessage]) -> Bool) throws -> [StreamMessage] {
        var messages: [StreamMessage] = []
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while Date() < deadline {
            guard try subscriber.waitForInput(timeoutMilliseconds: 100), let parts = try subscriber.receive(dontWait: true) else { continue }
            let message = try StreamMessage(parts: parts)
            guard message.body != nil else { continue }
            messages.append(message)
            if until(messages) { return messages }
        }
        throw NodeError("the stream did not reach the expected point; got \(messages.count) messages")
    }

    func shutdown() {
        stop.stop()
        done.wait()
        dealer.close()
        subscriber.close()
    }

    // MARK: - Messages a capture node and workers would send

    static func hello(stream: String, epoch: UInt64) -> Envelope.OneOf_Body {
        var hello = Hello()
        hello.dispatch = Wire.dispatchVersion
        hello.role = .capture
        hello.nodeID = "test-capture"
        hello.stream = stream
        hello.epoch = epoch
        hello.frameEndpoint = "tcp://127.0.0.1:9"
        return .hello(hello)
    }

    /// A processed frame with one face at `x` (moving a pixel a frame keeps it one track).
    static func result(stream: String, epoch: UInt64, seq: UInt64, faceX: Float?) -> Envelope.OneOf_Body {
        var result = FrameResult()
        result.stream = stream
        result.epoch = epoch
        result.seq = seq
        result.captureTimeUs = 1_700_000_000_000_000 + Int64(seq) * 33_333
        result.status = .processed
        result.width = 640
        result.height = 480
        result.worker = "test-worker"
        if let faceX {
            var face = WireFace()
            face.bounds.x = faceX
            face.bounds.y = 100
            face.bounds.width = 120
            face.bounds.height = 150
            face.confidence = 0.95
            result.faces = [face]
        }
        return .result(result)
    }

    static func end(stream: String, epoch: UInt64, nextSeq: UInt64) -> Envelope.OneOf_Body {
        var end = StreamEnd()
        end.stream = stream
        end.epoch = epoch
        end.nextSeq = nextSeq
        return .end(end)
    }
}

private final class EndpointBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value = ("", "")
    func set(_ control: String, _ publish: String) { lock.withLock { value = (control, publish) } }
    func get() -> (String, String) { lock.withLock { value } }
}

@Suite("CollectorNode (real sockets)", .serialized)
struct CollectorNodeTests {
    static func isEnd(_ message: StreamMessage) -> Bool {
        if case .end = message.body { return true }
        return false
    }

    @Test("reset: live tracks end, a TrackingReset sits between the frames where it took effect, new IDs afterwards", .timeLimit(.minutes(15)))
    func resetRestartsTracking() throws {
        let harness = try CollectorHarness()
        defer { harness.shutdown() }
        try harness.send(CollectorHarness.hello(stream: "cam", epoch: 7))
        for seq in UInt64(0)..<10 {
            try harness.send(CollectorHarness.result(stream: "cam", epoch: 7, seq: seq, faceX: 100 + Float(seq)))
        }
        // Wait until all ten frames are out, so the reset lands between 9 and 10.
        var messages = try harness.messages { $0.filter { if case .frame = $0.body { true } else { false } }.count == 10 }

        var reset = ResetRequest()
        reset.stream = "cam"
        reset.requestID = "r-1"
        try harness.send(.reset(reset))
        let reply = try harness.reply()
        guard case .resetReply(let answer) = reply.body else {
            Issue.record("expected a ResetReply, got \(reply)")
            return
        }
        #expect(answer.requestID == "r-1")
        #expect(answer.streams == ["cam"])

        var unknown = ResetRequest()
        unknown.stream = "no-such-stream"
        unknown.requestID = "r-2"
        try harness.send(.reset(unknown))
        guard case .resetReply(let none) = try harness.reply().body else {
            Issue.record("expected a ResetReply")
            return
        }
        #expect(none.requestID == "r-2")
        #expect(none.streams.isEmpty, "an unknown stream is reported as not reset")

        for seq in UInt64(10)..<20 {
            try harness.send(CollectorHarness.result(stream: "cam", epoch: 7, seq: seq, faceX: 100 + Float(seq)))
        }
        try harness.send(CollectorHarness.end(stream: "cam", epoch: 7, nextSeq: 20))
        messages += try harness.messages { $0.contains(where: Self.isEnd) }

        // The order of everything on the stream, as one list of labels.
        var frameIDs: [UInt64: UInt64] = [:]
        var frameCounts: [UInt64: UInt32] = [:]
        var order: [String] = []
        var resetMarker: TrackingReset?
        for message in messages {
            #expect(message.stream == "cam" && message.epoch == 7)
            switch message.body {
            case .frame(let frame):
                order.append("frame \(frame.seq)")
                let face = try #require(frame.faces.first)
                frameIDs[frame.seq] = face.trackingID
                frameCounts[frame.seq] = face.trackingFrameCount
            case .event(let event):
                order.append("\(event.kind == .appeared ? "appeared" : "left") \(event.trackingID)")
            case .reset(let marker):
                order.append("reset \(marker.seq)")
                resetMarker = marker
            case .end: order.append("end")
            default: break
            }
        }
        let marker = try #require(resetMarker, "no TrackingReset on the stream: \(order)")
        #expect(marker.seq == 10)
        #expect(marker.endedTracks == 1)
        let before = try #require(frameIDs[0])
        let after = try #require(frameIDs[10])
        #expect(before != 0 && after > before, "IDs after a reset are new and never reused: \(before) then \(after)")
        #expect((0..<10).allSatisfy { frameIDs[$0] == before }, "one ID before the reset")
        #expect((10..<20).allSatisfy { frameIDs[$0] == after }, "one ID after the reset")
        #expect(frameCounts[9] == 10 && frameCounts[10] == 1 && frameCounts[19] == 10, "frame counts restart: \(frameCounts)")
        let expected =
            ["frame 0", "appeared \(before)"] + (1..<10).map { "frame \($0)" }
            + ["left \(before)", "reset 10", "frame 10", "appeared \(after)"] + (11..<20).map { "frame \($0)" }
            + ["left \(after)", "end"]
        #expect(order == expected)
    }

    @Test("late and duplicate results are counted as they happen (results_late, results_duplicate)", .timeLimit(.minutes(15)))
    func lateAndDuplicateResultsAreCounted() throws {
        let harness = try CollectorHarness(maxDelayMilliseconds: 100)
        defer { harness.shutdown() }
        try harness.send(CollectorHarness.hello(stream: "dup", epoch: 3))
        try harness.send(CollectorHarness.result(stream: "dup", epoch: 3, seq: 0, faceX: nil))
        try harness.send(CollectorHarness.result(stream: "dup", epoch: 3, seq: 0, faceX: nil))  // a duplicate
        try harness.send(CollectorHarness.result(stream: "dup", epoch: 3, seq: 2, faceX: nil))  // 1 goes missing
        // Seq 1 times out after 100 ms and is emitted as dropped; its result then comes late.
        _ = try harness.messages { $0.contains { if case .frame(let frame) = $0.body { frame.seq == 2 } else { false } } }
        try harness.send(CollectorHarness.result(stream: "dup", epoch: 3, seq: 1, faceX: nil))
        try harness.send(CollectorHarness.end(stream: "dup", epoch: 3, nextSeq: 3))
        _ = try harness.messages { $0.contains(where: Self.isEnd) }
        #expect(harness.node.counters.value("results_duplicate") == 1)
        #expect(harness.node.counters.value("results_late") == 1)
    }

    @Test("statistics in the stream: windows add up to the frames emitted before each of them", .timeLimit(.minutes(15)))
    func statisticsAddUp() throws {
        let harness = try CollectorHarness(statisticsIntervalSeconds: 0.2)
        defer { harness.shutdown() }
        try harness.send(CollectorHarness.hello(stream: "stats", epoch: 1))
        var sent: UInt64 = 0
        var skippedSent = false
        var messages: [StreamMessage] = []
        // Frames in bursts, with a skip run (dropped at the source) in the middle, until three windows were published.
        while messages.filter({ if case .statistics = $0.body { true } else { false } }).count < 3 {
            for _ in 0..<5 {
                try harness.send(CollectorHarness.result(stream: "stats", epoch: 1, seq: sent, faceX: nil))
                sent += 1
            }
            if !skippedSent {
                var skipped = Skipped()
                skipped.stream = "stats"
                skipped.epoch = 1
                skipped.firstSeq = sent
                skipped.count = 4
                skipped.reason = "no-worker"
                try harness.send(.skipped(skipped))
                sent += 4
                skippedSent = true
            }
            let target = sent
            messages += try harness.messages { batch in
                batch.contains { if case .frame(let frame) = $0.body { frame.seq + 1 == target } else { false } }
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        var emitted: UInt64 = 0
        var windowed: UInt64 = 0
        var windowedDropped: UInt64 = 0
        var windows = 0
        for message in messages {
            switch message.body {
            case .frame: emitted += 1
            case .statistics(let statistics):
                windows += 1
                windowed += statistics.frames
                windowedDropped += statistics.dropped.reduce(0) { $0 + $1.count }
                #expect(statistics.nextSeq == emitted, "a window's next_seq is the number of frames before it")
                #expect(windowed == emitted, "windows cover every frame emitted before them exactly once")
                #expect(statistics.processed + statistics.dropped.reduce(0) { $0 + $1.count } == statistics.frames)
                #expect(statistics.windowSeconds > 0)
                #expect(statistics.dropped.map(\.reason) == statistics.dropped.map(\.reason).sorted())
                if statistics.processed > 0 {
                    #expect(statistics.hasLatencyP50Ms && statistics.hasLatencyP99Ms)
                    #expect(statistics.latencyP50Ms <= statistics.latencyP99Ms)
                }
            default: break
            }
        }
        #expect(windows >= 3)
        if windowed >= 9 { #expect(windowedDropped == 4, "the four frames skipped at the source are counted once, as dropped") }
    }
}
