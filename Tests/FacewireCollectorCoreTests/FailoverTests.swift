import FacewireProtocol
import FacewireTracking
import Testing
@testable import FacewireCollectorCore

/// Collector failover's pure parts (SPEC.md 18): checkpoints, a core continuing from them, the standby's replica and the
/// active's sender. No sockets, no sleeps: the clock is the harness's.
@Suite("Failover")
struct FailoverTests {
    // MARK: Helpers

    static func face(x: Float, score: Float = 0.9) -> WireFace {
        var face = WireFace()
        face.bounds.x = x
        face.bounds.y = 50
        face.bounds.width = 100
        face.bounds.height = 120
        face.confidence = score
        return face
    }

    /// A processed result with faces at the given x positions (one frame every 100 ms of capture time).
    static func result(_ stream: String, seq: UInt64, faces xs: [Float], epoch: UInt64 = 1) -> Envelope.OneOf_Body {
        var result = FrameResult()
        result.stream = stream
        result.epoch = epoch
        result.seq = seq
        result.status = .processed
        result.worker = "w-1"
        result.captureTimeUs = 1_732_240_000_000_000 + Int64(seq) * 100_000
        result.faces = xs.map { face(x: $0) }
        return .result(result)
    }

    /// An active (fencing epoch 3) that published `frames` frames of "cam", each with a face at `x` (none for nil).
    static func active(frames: UInt64, x: Float?) -> CoreHarness {
        var a = CoreHarness()
        a.core.startReplicating(leaderEpoch: 3)
        a.send(CoreHarness.hello("cam"))
        for seq in UInt64(0)..<frames { a.send(Self.result("cam", seq: seq, faces: x.map { [$0] } ?? [])) }
        return a
    }

    /// Checkpoints through the wire and back, checked as a standby checks them.
    static func resumes(_ checkpoints: [StreamCheckpoint], tracking: FaceTracker.Configuration = .init()) throws
        -> (open: [CollectorCore.StreamResume], closed: [StreamTable<FrameResult>.Key])
    {
        var message = Replication()
        message.checkpoints = checkpoints
        let bytes: [UInt8] = try message.serializedBytes()
        let decoded = try Replication(serializedBytes: bytes)
        var open: [CollectorCore.StreamResume] = []
        var closed: [StreamTable<FrameResult>.Key] = []
        for checkpoint in decoded.checkpoints {
            if checkpoint.closed {
                closed.append(.init(stream: checkpoint.stream, epoch: checkpoint.epoch))
            } else {
                open.append(try CollectorCore.resume(from: checkpoint, tracking: tracking).get())
            }
        }
        return (open, closed)
    }

    /// A harness whose core continues `from`'s streams with fencing epoch `leaderEpoch`, at the same time.
    static func takeOver(from h: CoreHarness, leaderEpoch: UInt64) throws -> CoreHarness {
        var b = CoreHarness(h.core.limits)
        b.now = h.now
        b.wall = h.wall
        b.core.startReplicating(leaderEpoch: leaderEpoch)
        let (open, closed) = try resumes(h.core.snapshot())
        b.core.restore(open, closed: closed, at: b.instant)
        return b
    }

    static func withoutEpoch(_ messages: [StreamMessage]) -> [StreamMessage] {
        messages.map {
            var message = $0
            message.leaderEpoch = 0
            return message
        }
    }

    static func events(_ messages: [StreamMessage], _ kind: FaceEvent.Kind) -> [UInt64] {
        messages.compactMap {
            guard case .event(let event)? = $0.body, event.kind == kind else { return nil }
            return event.trackingID
        }
    }

    // MARK: Checkpoints and restore

    @Test("a core restored from another's checkpoints publishes exactly what the original goes on to publish")
    func aRestoredCoreContinuesExactly() throws {
        var a = CoreHarness()
        a.core.startReplicating(leaderEpoch: 7)
        a.send(CoreHarness.hello("cam"))
        a.send(CoreHarness.hello("door", nextSeq: 0))
        // Two faces on cam, one on door; the second face of cam leaves at seq 6.
        for seq in UInt64(0)..<5 {
            a.advance(ms: 100)
            a.send(Self.result("cam", seq: seq, faces: [100 + Float(seq) * 3, 400]))
            a.send(Self.result("door", seq: seq, faces: [200]))
        }
        a.send(CoreHarness.skip("door", first: 5, count: 2))
        let before = a.published.count
        var b = try Self.takeOver(from: a, leaderEpoch: 9)
        var later: [Envelope.OneOf_Body] = []
        for seq in UInt64(5)..<12 {
            later.append(Self.result("cam", seq: seq, faces: seq < 6 ? [100 + Float(seq) * 3, 400] : [100 + Float(seq) * 3]))
        }
        for seq in UInt64(7)..<10 { later.append(Self.result("door", seq: seq, faces: [200])) }
        later.append(CoreHarness.end("cam", nextSeq: 12))
        later.append(CoreHarness.end("door", nextSeq: 10))
        for body in later {
            a.advance(ms: 20)
            b.advance(ms: 20)
            a.send(body)
            b.send(body)
        }
        let original = Array(a.published[before...])
        #expect(original.count >= 15, "frames, events and summaries of both streams")
        #expect(Self.withoutEpoch(b.published) == Self.withoutEpoch(original))
        #expect(b.published.allSatisfy { $0.leaderEpoch == 9 }, "the new active stamps its own epoch")
        #expect(Self.events(b.published, .appeared).isEmpty, "faces tracked before the takeover are not announced again")
        #expect(Self.events(b.published, .left).count == 3, "each face leaves once")
        let lastBefore = a.published[..<before].last { $0.stream == "cam" }?.publication ?? 0
        #expect(lastBefore > 0 && b.published.first { $0.stream == "cam" }?.publication == lastBefore + 1, "numbering goes on")
        #expect(b.summary("cam")?.frames == 12 && b.summary("door")?.frames == 10, "the summaries count the whole stream")
    }

    @Test("results buffered at the active and lost with it are published as dropped with reason failover")
    func lostResultsDropAsFailover() throws {
        var a = CoreHarness()
        a.core.startReplicating(leaderEpoch: 3)
        a.send(CoreHarness.hello("cam"))
        a.send(Self.result("cam", seq: 0, faces: [100]))
        a.send(Self.result("cam", seq: 1, faces: [102]))
        // Seq 2 is late; 3 and 4 wait at the active, which dies.
        a.send(Self.result("cam", seq: 3, faces: [106]))
        a.send(Self.result("cam", seq: 4, faces: [108]))
        var b = try Self.takeOver(from: a, leaderEpoch: 4)
        #expect(b.core.heads["cam/1"] == 2, "the checkpoint's head is the next seq to publish")
        // The capture node's first hello: frames from 8 on were sent after the takeover.
        b.send(CoreHarness.hello("cam", nextSeq: 8))
        b.send(Self.result("cam", seq: 5, faces: [110]))
        b.send(Self.result("cam", seq: 8, faces: [116]))
        b.send(Self.result("cam", seq: 10, faces: [120]))
        b.advance(ms: 150)
        b.tick()
        let frames = b.frames("cam")
        #expect(frames.map(\.seq) == Array(2...10))
        #expect(frames.map(\.reason) == ["failover", "failover", "failover", "", "failover", "failover", "", "timeout", ""])
        #expect(frames[3].status == .processed && frames[3].faces.first?.trackingID == 1, "the face keeps its tracking ID")
        #expect(Self.events(b.published, .appeared).isEmpty)
        b.send(Self.result("cam", seq: 0, faces: [100]))
        #expect(b.total("results_late") == 1, "a result below the restored head is late")
    }

    @Test("a stream that ended before the takeover stays ended: its stragglers are refused")
    func endedStreamsStayEnded() throws {
        var a = Self.active(frames: 1, x: nil)
        a.send(CoreHarness.end("cam", nextSeq: 1))
        #expect(a.summary("cam") != nil)
        var b = try Self.takeOver(from: a, leaderEpoch: 4)
        b.send(Self.result("cam", seq: 0, faces: []))
        #expect(b.published.isEmpty && b.total("late_after_end") == 1)
    }

    @Test("a left event after the takeover carries the heart rate the active last reported")
    func theLastHeartRateCrossesTheFailover() throws {
        let a = Self.active(frames: 3, x: 100)
        var checkpoint = a.core.checkpoint(of: .init(stream: "cam", epoch: 1))
        #expect(checkpoint.tracks.count == 1 && checkpoint.tracks[0].id == 1)
        var rate = Facewire_V1_HeartRate()
        rate.bpm = 72
        rate.snr = 4
        rate.windowSeconds = 10
        checkpoint.tracks[0].lastHeartRate = rate
        var b = CoreHarness()
        b.core.startReplicating(leaderEpoch: 4)
        b.core.restore(try Self.resumes([checkpoint]).open, closed: [], at: b.instant)
        b.send(CoreHarness.end("cam", nextSeq: 3))
        let left = b.published.compactMap { if case .event(let event)? = $0.body { event } else { nil } }
        #expect(left.count == 1 && left[0].kind == .left && left[0].heartRate.bpm == 72)
    }

    @Test("a face keeps its tracking ID over a long handover; the same gap in the stream itself loses it")
    func theHandoverGapDoesNotEndTracks() throws {
        // A face walking right at 100 px/s in frames 0...3 (0.1 s apart); the next processed frame is 30, 2.7 s later
        // (--track-max-age 1 s), the face a little further: 2.7 s of its velocity would overshoot.
        var a = CoreHarness()
        a.core.startReplicating(leaderEpoch: 3)
        a.send(CoreHarness.hello("cam"))
        for seq in UInt64(0)..<4 { a.send(Self.result("cam", seq: seq, faces: [100 + Float(seq) * 10])) }
        var b = try Self.takeOver(from: a, leaderEpoch: 4)
        for h in [0, 1] {
            var harness = h == 0 ? a : b
            harness.send(CoreHarness.hello("cam", nextSeq: 30))
            harness.send(Self.result("cam", seq: 30, faces: [160]))
            harness.advance(ms: 200)
            harness.tick()
            if h == 0 { a = harness } else { b = harness }
        }
        #expect(b.frames("cam").last?.seq == 30 && b.frames("cam").last?.faces.first?.trackingID == 1)
        #expect(Self.events(b.published, .appeared).isEmpty && Self.events(b.published, .left).isEmpty)
        #expect(a.frames("cam").last?.faces.first?.trackingID == 2, "without a handover the same gap loses the face")
    }

    @Test("hostile checkpoints are refused by name")
    func hostileCheckpointsAreRefused() {
        let a = Self.active(frames: 3, x: 100)
        let good = a.core.checkpoint(of: .init(stream: "cam", epoch: 1))
        let tracking = FaceTracker.Configuration(maxTracks: 4)
        func refusal(_ change: (inout StreamCheckpoint) -> Void) -> CollectorCore.CheckpointRefusal? {
            var checkpoint = good
            change(&checkpoint)
            if case .failure(let why) = CollectorCore.resume(from: checkpoint, tracking: tracking) { return why }
            return nil
        }
        #expect(refusal { _ in } == nil)
        #expect(refusal { $0.stream = "a b" } == .stream)
        #expect(refusal { $0.stream = String(repeating: "x", count: 1 << 20) } == .stream)
        #expect(refusal { $0.nextPublication = 0 } == .publication)
        #expect(refusal { $0.tracks = Array(repeating: $0.tracks[0], count: 5) } == .tracker)
        #expect(refusal { $0.tracks[0].filter.removeLast() } == .tracker)
        #expect(refusal { $0.tracks[0].filter[0] = .nan } == .tracker)
        #expect(refusal { $0.tracks[0].time = .infinity } == .tracker)
        #expect(refusal { $0.tracks[0].lastSeenTime = 1e300 } == .tracker, "finite, but a gap added to it overflows")
        #expect(refusal { $0.previousTime = -.greatestFiniteMagnitude } == .tracker)
        #expect(refusal { $0.nextTrackID = 1 } == .tracker, "an ID at or above the next")
        #expect(refusal { $0.tracks[0].lastHeartRate.bpm = .nan } == .heartRate)
        #expect(refusal { $0.tracks[0].lastHeartRate.bpm = 1e9 } == .heartRate)
        #expect(refusal { $0.tracks[0].id = 0; $0.tracks[0].lastHeartRate.bpm = 70 } == .heartRate)
        // Absurd but harmless values are accepted and never trap.
        #expect(refusal { $0.nextSeq = .max; $0.endSeq = 0; $0.emitted = .max; $0.processed = .max; $0.errors = .max } == nil)
    }

    @Test("a restored stream at absurd positions never traps")
    func absurdPositionsNeverTrap() throws {
        let a = Self.active(frames: 1, x: nil)
        var checkpoint = a.core.checkpoint(of: .init(stream: "cam", epoch: 1))
        for (next, end) in [(UInt64.max, UInt64?.none), (.max - 1, .max), (5, 2), (0, .max)] {
            checkpoint.nextSeq = next
            if let end { checkpoint.endSeq = end } else { checkpoint.clearEndSeq() }
            checkpoint.workerDropped = .max
            checkpoint.processed = 1
            var b = CoreHarness()
            b.core.startReplicating(leaderEpoch: 4)
            b.core.restore(try Self.resumes([checkpoint]).open, closed: [], at: b.instant)
            b.send(CoreHarness.hello("cam", nextSeq: .max))
            b.send(CoreHarness.result("cam", seq: .max - 1))
            b.advance(ms: 1000)
            b.tick()
            b.send(CoreHarness.end("cam", nextSeq: .max))
            b.advance(ms: 1000)
            b.tick()
        }
    }

    @Test("a standby takes no input: it answers each message with a Welcome naming the active, and counts what it refused")
    func aStandbyAnswersWithTheActive() {
        var h = CoreHarness()
        h.core.announcement = .init(role: .standby, leaderEpoch: 7, activeEndpoint: "tcp://a:5556")
        h.send(CoreHarness.hello("w", role: .worker), from: CoreHarness.worker)
        h.send(CoreHarness.hello("cam"))
        h.send(Self.result("cam", seq: 0, faces: [100]), from: CoreHarness.worker)
        h.send(CoreHarness.end("cam", nextSeq: 1))
        #expect(h.published.isEmpty && h.core.heads.isEmpty)
        #expect(h.total("standby_refused_result") == 1 && h.total("standby_refused_end") == 1)
        let welcomes = h.outputs.flatMap(\.replies).compactMap { if case .welcome(let welcome)? = $0.envelope.body { welcome } else { nil } }
        #expect(welcomes.count == 4 && welcomes.allSatisfy { $0.role == .standby && $0.leaderEpoch == 7 && $0.activeEndpoint == "tcp://a:5556" })
        // Taking over, it tells the peers that said hello.
        let peers = h.core.standbyPeerIdentities(at: h.now)
        #expect(Set(peers) == [CoreHarness.worker, CoreHarness.capture])
        var b = CoreHarness()
        b.core.announcement = .init(role: .active, leaderEpoch: 8, activeEndpoint: "tcp://b:5556")
        let told = b.core.announceTakeover(to: peers).replies
        #expect(told.count == 1 && Set(told[0].identities) == Set(peers))
        if case .welcome(let welcome)? = told.first?.envelope.body { #expect(welcome.role == .active && welcome.leaderEpoch == 8) }
        // An active answers a capture node's hello with a Welcome without the capture list.
        b.send(CoreHarness.hello("cam"))
        let answer = b.outputs.last?.replies.first
        if case .welcome(let welcome)? = answer?.envelope.body {
            #expect(welcome.captures.isEmpty && welcome.role == .active)
        } else {
            Issue.record("no Welcome for the capture node's hello")
        }
    }

    @Test("without replication nothing is numbered and nothing is recorded")
    func withoutReplicationNothingChanges() {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        h.send(Self.result("cam", seq: 0, faces: [100]))
        #expect(h.published.allSatisfy { $0.publication == 0 && $0.leaderEpoch == 0 })
        #expect(h.core.takeCheckpoints().isEmpty)
    }
}
