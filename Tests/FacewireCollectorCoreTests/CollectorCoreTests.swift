import FacewireProtocol
import Testing
@testable import FacewireCollectorCore

/// The collector's decisions, driven without sockets or sleeps (SPEC.md 9, 14).
@Suite("CollectorCore")
struct CollectorCoreTests {
    // MARK: Ordinary streams

    @Test func aStreamIsPublishedInOrderWithItsSummary() {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        h.send(CoreHarness.result("cam", seq: 1, captureTime: h.wall - 40_000))
        h.send(CoreHarness.result("cam", seq: 0, captureTime: h.wall - 50_000))
        h.send(CoreHarness.skip("cam", first: 2, count: 3))
        h.send(CoreHarness.end("cam", nextSeq: 5))
        let frames = h.frames("cam")
        #expect(frames.map(\.seq) == [0, 1, 2, 3, 4])
        #expect(frames.map(\.status) == [.processed, .processed, .dropped, .dropped, .dropped])
        #expect(frames.allSatisfy { $0.runLength == 0 }, "short runs are published frame by frame")
        #expect(frames[0].timings.totalMs == 50, "total_ms from the injected wall clock")
        #expect(h.summary("cam")?.frames == 5 && h.summary("cam")?.processed == 2 && h.summary("cam")?.dropped == 3)
        #expect(h.summary("cam")?.nextSeq == 5, "the summary names the sequence after the last line")
        #expect(h.total("frames_processed") == 2 && h.total("frames_dropped") == 3)
        #expect(h.outputs.flatMap(\.latencies) == [50_000_000, 40_000_000])
    }

    @Test("a capture node or worker of dispatch protocol 1 is refused, counted and logged: not announced, no Welcome")
    func dispatchProtocolOneIsRefused() {
        var h = CoreHarness()
        for role in [NodeRole.capture, .worker] {
            guard case .hello(var hello) = CoreHarness.hello(role == .capture ? "old" : "", role: role) else { return }
            hello.dispatch = 0
            let out = h.send(.hello(hello), from: role == .capture ? [1] : CoreHarness.worker)
            #expect(out.replies.isEmpty)
        }
        #expect(h.total("hello_refused_dispatch_1") == 2)
        #expect(h.core.gauges(at: h.now).captures == 0)
        #expect(h.core.gauges(at: h.now).workers == 0)
        // Its skips still account for its frames: the stream exists and says why they were dropped.
        var skipped = Skipped()
        skipped.stream = "old"
        skipped.epoch = 1
        skipped.count = 3
        skipped.reason = "no-worker"
        h.send(.skipped(skipped))
        #expect(h.frames("old").map(\.reason) == ["no-worker", "no-worker", "no-worker"])
    }

    @Test("the collector pairs an idle thread's Idle with a capture node's request: the node gets an Assignment")
    func dispatchThroughTheCore() {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"), from: [7])
        var request = DispatchRequest()
        request.stream = "cam"
        request.epoch = 1
        request.wanted = 1
        h.send(.request(request), from: [7])
        var idle = Idle()
        idle.worker = "w/t0"
        let out = h.send(.idle(idle), from: [9])
        guard let reply = out.replies.first, case .assignment(let assignment)? = reply.envelope.body else {
            Issue.record("no assignment")
            return
        }
        #expect(reply.identities == [[7]])
        #expect(assignment.worker == "w/t0" && assignment.number == 1)
        #expect(h.core.broker.figures.assigned == 1)
        // Its result frees it (and is published as usual).
        h.send(CoreHarness.result("cam", seq: 0), from: [9])
        #expect(h.core.broker.figures.assigned == 0)
    }

    @Test func aWorkerGetsAWelcomeListingTheCaptureNode() {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        let out = h.send(CoreHarness.hello("", role: .worker), from: CoreHarness.worker)
        guard let reply = out.replies.first, case .welcome(let welcome)? = reply.envelope.body else {
            Issue.record("no welcome")
            return
        }
        #expect(reply.identities == [CoreHarness.worker])
        #expect(welcome.captures.map(\.frameEndpoint) == ["tcp://10.0.0.9:5556"])
        // A new capture node is pushed to remembered workers at the next tick, once.
        h.send(CoreHarness.hello("cam2"))
        h.send(CoreHarness.hello("cam3"))
        let pushed = h.tick().replies
        #expect(pushed.count == 1 && pushed[0].identities == [CoreHarness.worker])
        #expect(h.tick().replies.isEmpty)
    }

    @Test func aViewLearnsEachCaptureNodesPreviewEndpointWithItsWildcardResolved() {
        var h = CoreHarness()
        guard case .hello(var hello) = CoreHarness.hello("cam") else { return }
        hello.previewEndpoint = "tcp://0.0.0.0:5565"
        h.send(.hello(hello))
        h.send(CoreHarness.hello("plain"))
        let out = h.send(CoreHarness.hello("", role: .view), from: CoreHarness.worker)
        guard let reply = out.replies.first, case .welcome(let welcome)? = reply.envelope.body else {
            Issue.record("a view is answered like a tail")
            return
        }
        let previews = Dictionary(uniqueKeysWithValues: welcome.captures.map { ($0.stream, $0.previewEndpoint) })
        #expect(previews == ["cam": "tcp://10.0.0.9:5565", "plain": ""], "no preview announced: none listed")
        // An absurd preview endpoint refuses the whole hello, like an absurd frame endpoint.
        hello.previewEndpoint = "tcp://" + String(repeating: "h", count: 300) + ":1"
        hello.stream = "cam2"
        h.send(.hello(hello))
        #expect(h.total("hello_rejected_endpoint") == 1)
        #expect(h.core.gauges(at: h.now).captures == 2)
    }

    // MARK: Attacks: runs

    @Test func aSkipOfTwoToTheFortyIsOneMessage() {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        h.send(CoreHarness.skip("cam", first: 0, count: 1 << 40))
        h.send(CoreHarness.result("cam", seq: 1 << 40))
        let frames = h.frames("cam")
        #expect(frames.count == 2)
        #expect(frames[0].runLength == 1 << 40 && frames[0].status == .dropped && frames[0].reason == "no-worker")
        #expect(checkOrdered(frames) == (true, (1 << 40) + 1))
        #expect(h.total("frames_dropped") == 1 << 40)
        #expect(h.outputs.flatMap(\.frames).filter { $0.status == "dropped" }.map(\.count) == [1 << 40])
    }

    @Test func anEndAtTwoToTheSixtyThreeIsOneMessageAfterTheDelay() {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        h.send(CoreHarness.result("cam", seq: 0))
        h.send(CoreHarness.end("cam", nextSeq: 1 << 63))
        h.advance(ms: 101)
        h.tick()
        let frames = h.frames("cam")
        #expect(frames.count == 2 && frames[1].runLength == (1 << 63) - 1 && frames[1].reason == "timeout")
        #expect(h.summary("cam")?.frames == 1 << 63 && h.summary("cam")?.dropped == (1 << 63) - 1)
        #expect(h.summary("cam")?.nextSeq == 1 << 63)
    }

    @Test func resultsFarAheadAndSkipsToTheLastSequenceNeverTrap() {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        h.send(CoreHarness.result("cam", seq: 1 << 40))
        h.advance(ms: 101)
        h.tick()
        #expect(checkOrdered(h.frames("cam")) == (true, (1 << 40) + 1))
        // Two skips whose lengths add past UInt64.max: counters saturate.
        h.send(CoreHarness.skip("cam", first: (1 << 40) + 1, count: .max))
        h.send(CoreHarness.skip("cam", first: 0, count: .max))
        h.send(CoreHarness.result("cam", seq: .max))
        h.send(CoreHarness.result("cam", seq: .max - 1))
        #expect(h.total("skipped") == .max)
        #expect(checkOrdered(h.frames("cam")).ok)
        #expect(h.frames("cam").count == 3)
    }

    // MARK: Attacks: time fields, epochs, enums, strings, floats

    @Test(arguments: [Int64.min, -1, Int64.max])
    func implausibleCaptureTimesAreRejectedByName(_ time: Int64) {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        h.send(CoreHarness.result("cam", seq: 0, captureTime: time))
        #expect(h.total("results_rejected_capture_time") == 1)
        #expect(h.frames("cam").isEmpty)
        // The frame then drops as timeout once a later one is known, like a lost result.
        h.send(CoreHarness.result("cam", seq: 1, captureTime: 0))
        h.advance(ms: 101)
        h.tick()
        #expect(h.frames("cam").map(\.reason) == ["timeout", ""])
    }

    @Test(arguments: [Int64.min, -1, 0, Int64.max])
    func skipsWithAnyCaptureTimeAreAccepted(_ time: Int64) {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        h.send(CoreHarness.skip("cam", first: 0, count: 2, captureTime: time))
        #expect(h.frames("cam").map(\.seq) == [0, 1])
    }

    @Test(arguments: [UInt64.min, .max])
    func extremeEpochsOpenAndEndStreams(_ epoch: UInt64) {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam", epoch: epoch))
        h.send(CoreHarness.result("cam", seq: 0, epoch: epoch))
        h.send(CoreHarness.end("cam", nextSeq: 1, epoch: epoch))
        #expect(h.summary("cam")?.frames == 1)
        #expect(h.published.allSatisfy { $0.epoch == epoch })
    }

    @Test func unknownEnumValuesAreHandled() {
        var h = CoreHarness()
        let out = h.send(CoreHarness.hello("x", role: .UNRECOGNIZED(99)), from: [9])
        #expect(out.replies.count == 1, "an unknown role is answered like a tail")
        h.send(CoreHarness.hello("cam"))
        guard case .result(var result) = CoreHarness.result("cam", seq: 0) else { return }
        result.status = .UNRECOGNIZED(7)
        h.send(.result(result))
        #expect(h.summary("cam") == nil)
        #expect(h.total("frames_failed") == 1, "an unknown status is published and counted as an error")
        #expect(h.frames("cam").first?.status == .UNRECOGNIZED(7))
    }

    @Test func emptyAndMaximalStringsAreBounded() {
        var h = CoreHarness()
        h.send(CoreHarness.result("", seq: 0))
        h.send(CoreHarness.result(String(repeating: "a", count: 1 << 20), seq: 0))
        #expect(h.total("invalid_stream") == 2)
        h.send(CoreHarness.hello("cam"))
        guard case .skipped(var skipped) = CoreHarness.skip("cam", first: 0, count: 1) else { return }
        skipped.reason = String(repeating: "r", count: 1 << 20)
        h.send(.skipped(skipped))
        #expect(h.total("skipped_rejected_reason") == 1)
        guard case .hello(var hello) = CoreHarness.hello("cam2") else { return }
        hello.frameEndpoint = "tcp://" + String(repeating: "h", count: 1 << 20) + ":1"
        h.send(.hello(hello))
        hello.frameEndpoint = ""
        h.send(.hello(hello))
        #expect(h.total("hello_rejected_endpoint") == 2)
        #expect(h.core.gauges(at: h.now).captures == 1)
        #expect(h.notices("hello_rejected_endpoint") == 1, "logged once per interval, not per message")
    }

    @Test func nonFiniteFacesNeverReachTheTracker() {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        guard case .result(var result) = CoreHarness.result("cam", seq: 0) else { return }
        var face = WireFace()
        face.bounds.x = .nan
        face.bounds.width = 100
        face.bounds.height = 100
        face.confidence = 0.9
        result.faces = [face]
        h.send(.result(result))
        #expect(h.total("results_rejected_face") == 1)
        #expect(h.frames("cam").isEmpty)
    }

    // MARK: Caps

    @Test func streamsBeyondTheCapAreRefusedCountedAndLoggedOnce() {
        var h = CoreHarness(CollectorLimits(maxDelay: 100_000_000, maxStreams: 4, statisticsInterval: 0))
        for index in 0..<1000 { h.send(CoreHarness.hello("s\(index)")) }
        #expect(h.core.gauges(at: h.now).streams == 4)
        #expect(h.total("streams_refused_cap") == 996)
        #expect(h.notices("streams_refused_cap") == 1)
        // A new epoch of an open stream still supersedes it: the old one waits --max-delay for frames in flight, then
        // ends.
        h.send(CoreHarness.hello("s0", epoch: 2))
        #expect(h.core.heads["s0/2"] == 0 && h.core.heads["s0/1"] == 0)
        h.advance(ms: 101)
        _ = h.tick()
        #expect(h.core.heads["s0/2"] == 0 && h.core.heads["s0/1"] == nil)
    }

    @Test func capturesAndWorkersAreCapped() {
        var h = CoreHarness(CollectorLimits(maxDelay: 100_000_000, maxCaptures: 3, maxWorkers: 2, statisticsInterval: 0))
        for index in 0..<10 { h.send(CoreHarness.hello("c\(index)")) }
        #expect(h.total("captures_refused_cap") == 7)
        for index: UInt8 in 10..<20 {
            let out = h.send(CoreHarness.hello("", role: .worker), from: [index])
            #expect(out.replies.count == 1, "every worker is answered")
        }
        #expect(h.total("workers_refused_cap") == 8)
        let gauges = h.core.gauges(at: h.now)
        #expect(gauges.captures == 3 && gauges.workers == 2)
        // Silent peers are forgotten, freeing their places.
        h.advance(ms: 11_000)
        h.tick()
        #expect(h.core.gauges(at: h.now).workers == 0)
        h.send(CoreHarness.hello("c9"))
        #expect(h.total("captures_refused_cap") == 7)
    }

    @Test func bufferedResultsAreBoundedInBytes() {
        var h = CoreHarness(CollectorLimits(maxDelay: 100_000_000, maxPendingBytes: 4000, statisticsInterval: 0))
        h.send(CoreHarness.hello("cam"))
        for seq: UInt64 in 1...10 {
            guard case .result(var result) = CoreHarness.result("cam", seq: seq) else { return }
            result.reason = String(repeating: "r", count: 1000)
            h.send(.result(result))
        }
        #expect(h.core.pendingBytes <= 4000)
        #expect(h.total("results_refused_pending_bytes") > 0)
        #expect(h.notices("results_refused_pending_bytes") == 1)
        // The head is always taken, and drains the buffer.
        h.send(CoreHarness.result("cam", seq: 0))
        #expect(h.core.pendingBytes == 0)
        #expect(checkOrdered(h.frames("cam")) == (true, 4), "0 and the buffered 1...3")
        // The refused ones drop as timeout once a later result is known, like lost results.
        h.send(CoreHarness.result("cam", seq: 10))
        h.advance(ms: 101)
        h.tick()
        #expect(checkOrdered(h.frames("cam")) == (true, 11))
        #expect(h.frames("cam")[4...9].allSatisfy { $0.reason == "timeout" })
    }

    @Test func metricLabelsAreBounded() {
        var h = CoreHarness(CollectorLimits(maxDelay: 100_000_000, maxMetricStreams: 2, statisticsInterval: 0))
        for index in 0..<5 {
            h.send(CoreHarness.hello("s\(index)"))
            h.send(CoreHarness.skip("s\(index)", first: 0, count: 1))
        }
        let labels = Set(h.outputs.flatMap(\.frames).map(\.stream))
        #expect(labels == ["s0", "s1", "_other"])
    }

    @Test func anIdleStreamClosesItsGapsAsTimeout() {
        var h = CoreHarness(CollectorLimits(maxDelay: 100_000_000, streamIdleTimeout: 5_000_000_000, statisticsInterval: 0))
        h.send(CoreHarness.hello("cam"))
        h.send(CoreHarness.result("cam", seq: 0))
        // A hello flood's stream: nothing more ever comes.
        h.send(CoreHarness.hello("idle"))
        h.advance(ms: 4000)
        h.tick()
        #expect(h.summary("idle") == nil)
        h.send(CoreHarness.result("cam", seq: 1))
        h.advance(ms: 1500)
        h.tick()
        #expect(h.summary("idle")?.frames == 0, "the idle stream ended")
        #expect(h.summary("cam") == nil, "the live one did not")
        #expect(h.total("streams_idle_closed") == 1)
        #expect(h.core.gauges(at: h.now).streams == 1)
    }

    // MARK: Reset and statistics

    @Test func resetPublishesAMarkerAndReplies() {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        var request = ResetRequest()
        request.requestID = "r1"
        let out = h.send(.reset(request), from: [7])
        #expect(out.publish.contains { if case .reset? = $0.body { true } else { false } })
        guard case .resetReply(let reply)? = out.replies.first?.envelope.body else {
            Issue.record("no reply")
            return
        }
        #expect(reply.requestID == "r1" && reply.streams == ["cam"])
        request.requestID = String(repeating: "x", count: 65)
        #expect(h.send(.reset(request), from: [7]).replies.isEmpty)
    }

    @Test func statisticsArePublishedEveryInterval() {
        var h = CoreHarness(CollectorLimits(maxDelay: 100_000_000, statisticsInterval: 5_000_000_000))
        h.tick()
        h.send(CoreHarness.hello("cam"))
        h.send(CoreHarness.skip("cam", first: 0, count: 1 << 40))
        h.advance(ms: 5000)
        let out = h.tick()
        guard case .statistics(let statistics)? = out.publish.first?.body else {
            Issue.record("no statistics")
            return
        }
        #expect(statistics.frames == 1 << 40 && statistics.nextSeq == 1 << 40)
        #expect(statistics.dropped.map(\.reason) == ["no-worker"])
    }
}
