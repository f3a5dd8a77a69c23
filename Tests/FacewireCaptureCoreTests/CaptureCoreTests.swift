import FacewireProtocol
import FacewireRuntime
import Testing

@testable import FacewireCaptureCore

@Suite("CaptureCore: pacing")
struct CaptureCorePacingTests {
    @Test("fixed rate: seq 0 waits for a worker, the timeline starts when it is sent, later frames are due at index / fps")
    func fixedRate() {
        var rig = CaptureRig(.timed(fps: 10, followsMediaTime: false))
        #expect(rig.next == .read)
        rig.read(0)
        #expect(rig.next == .wait(untilNs: nil), "seq 0 waits for a credit")
        rig.advance(ms: 5000)
        rig.tick()
        #expect(rig.sent.isEmpty)
        rig.ready("a")
        #expect(rig.sent == ["0→a"])
        let started = rig.clockNs
        #expect(rig.next == .read)
        rig.read(1)
        #expect(rig.next == .wait(untilNs: started + 100_000_000), "the pacing clock restarted when seq 0 went out")
        rig.ready("b")
        rig.advance(ms: 99)
        rig.tick()
        #expect(rig.sent == ["0→a"], "not due yet")
        rig.advance(ms: 1)
        rig.tick()
        #expect(rig.sent == ["0→a", "1→b"])
        #expect(rig.link.sent[1].header.captureTimeUs == rig.now.wallUs, "stamped when numbered")
        #expect(rig.link.sent[1].header.deadlineUs == rig.now.wallUs + 2_000_000, "live frames carry --max-age")
    }

    @Test("real time: frames are due at their presentation times, never back in time")
    func presentationTimes() {
        var rig = CaptureRig(.timed(fps: 30, followsMediaTime: true))
        rig.ready("a")
        rig.read(0, media: 7.0)
        #expect(rig.sent == ["0→a"])
        let start = rig.clockNs
        rig.read(1, media: 7.5)
        #expect(rig.next == .wait(untilNs: start + 500_000_000))
        rig.advance(ms: 500)
        rig.tick()
        rig.read(2, media: 7.2)  // earlier than the last: due at once
        #expect(rig.next == .read)
        rig.read(3, media: .nan)  // nonsense: due at once, no trap
        rig.read(4, media: 1e300)
        #expect(rig.next != .read, "a frame far in the future waits (its due time is clamped, no trap)")
        #expect(rig.core.nextSeq == 4)
    }

    @Test("media time: a file's presentation time from its first frame, the same at any pace; absurd times clamped")
    func mediaTimeOfAFile() {
        for pacing: CaptureRig.Core.Pacing in [.unpaced, .timed(fps: 30, followsMediaTime: true), .timed(fps: 5, followsMediaTime: false)] {
            var rig = CaptureRig(pacing) { $0.mediaFPS = 30 }
            let medias: [Double] = [7.0, 7.5, 7.2, .nan, 8.25, 1e300, -5]
            for (index, media) in medias.enumerated() {
                rig.ready("w\(index)")
                rig.advance(ms: 10)  // sent far faster than the file's own rate
                rig.tick()
                rig.read(index, media: media)
                // Real-time pacing holds the 1e300 frame for a century: the later frames are not waited for.
                for _ in 0..<30 where rig.next != .read && rig.core.nextSeq <= UInt64(index) {
                    rig.advance(ms: 100)
                    rig.tick()
                }
            }
            let times = rig.link.sent.map { $0.header.hasMediaTimeUs ? $0.header.mediaTimeUs : -1 }
            let century: Int64 = 3_155_760_000_000_000
            let expected: [Int64] = [0, 500_000, 500_000, 500_000, 1_250_000, century, century]
            #expect(times.count >= 5 && times == Array(expected.prefix(times.count)), "\(pacing): \(times)")
            #expect(rig.link.sent.first?.header.hasMediaTimeUs == true, "0 is present (a file's first frame)")
        }
    }

    @Test("media time: frames without a presentation time (a folder) are placed at index / mediaFPS; live: none")
    func mediaTimeOfAFolderAndOfALiveSource() {
        var folder = CaptureRig(.unpaced) { $0.mediaFPS = 4 }
        var live = CaptureRig(.live)
        for index in 0..<3 {
            folder.ready("w\(index)")
            folder.read(index)
            live.ready("w\(index)")
            live.read(index, media: Double(index))  // a stray presentation time: live sources carry none (mediaFPS nil)
            live.advance(ms: 33)
        }
        #expect(folder.link.sent.map(\.header.mediaTimeUs) == [0, 250_000, 500_000])
        #expect(folder.link.sent.allSatisfy { $0.header.hasMediaTimeUs })
        #expect(live.link.sent.count == 3)
        #expect(live.link.sent.allSatisfy { !$0.header.hasMediaTimeUs })
    }

    @Test("unpaced: read only when a worker holds a credit, nothing dropped, no deadline")
    func unpaced() {
        var rig = CaptureRig(.unpaced)
        #expect(rig.next == .read, "the first frame is read before any worker")
        rig.read(0)
        #expect(rig.next == .wait(untilNs: nil))
        rig.advance(ms: 3000)
        rig.ready("a")
        #expect(rig.sent == ["0→a"])
        #expect(rig.link.sent[0].header.captureTimeUs == CaptureRig.startWallUs, "capture time: when it was read")
        #expect(rig.link.sent[0].header.deadlineUs == 0)
        #expect(rig.next == .wait(untilNs: nil), "no credit, no read")
        rig.ready("b")
        #expect(rig.next == .read)
        rig.read(1)
        #expect(rig.sent == ["0→a", "1→b"])
        #expect(rig.counters.value("frames_dropped_at_source") == 0)
    }

    @Test("--max-fps: frames above the rate are not numbered")
    func maxFPS() {
        var rig = CaptureRig(.live) { $0.maxFPS = 10 }
        for index in 0..<30 {
            rig.read(index)
            rig.advance(ms: 33)
        }
        #expect(rig.core.nextSeq == 10)
        #expect(rig.counters.value("frames_over_max_fps") == 20)
    }

    @Test("seq 0 of a file that waited for its first worker is stamped when it goes out; --max-fps books from there")
    func firstFrameStampedWhenSent() {
        var rig = CaptureRig(.timed(fps: 30, followsMediaTime: false)) { $0.maxFPS = 5 }
        rig.read(0)
        rig.advance(ms: 900)  // the first worker is still loading its model
        rig.ready("a")
        #expect(rig.link.sent.first?.header.captureTimeUs == rig.now.wallUs, "stamped when the timeline starts")
        // The following frames are due every 33 ms from here; --max-fps 5 keeps every sixth, 200 ms apart, the first of
        // them 200 ms after seq 0 (before the fix seq 0 carried its read time, 900 ms earlier, and the gap was 1.1 s).
        for index in 1...12 {
            rig.ready("w\(index)")
            rig.read(index)
            rig.advance(ms: 34)
            rig.tick()
        }
        let times = rig.link.sent.map(\.header.captureTimeUs)
        #expect(times.count == 3, "\(times)")
        #expect(zip(times, times.dropFirst()).allSatisfy { abs(Double($1 - $0) / 1000 - 200) <= 40 }, "\(times)")
    }

    @Test("--frames: the stream ends after that many frames, StreamEnd has next_seq")
    func maxFrames() {
        var rig = CaptureRig(.unpaced) { $0.maxFrames = 2 }
        rig.ready("a")
        rig.read(0)
        rig.ready("a")
        rig.read(1)
        #expect(rig.next == .finished)
        #expect(rig.reports == ["end 42/2"])
    }
}

@Suite("CaptureCore: the held frame and skip runs")
struct CaptureCoreHeldFrameTests {
    @Test("a frame no worker waits for is held and goes to the first worker that says Ready")
    func heldGoesToFirstIdle() {
        var rig = CaptureRig(.live)
        rig.read(0)
        #expect(rig.sent.isEmpty && rig.core.holdsFrame)
        rig.ready("a")
        #expect(rig.sent == ["0→a"])
        #expect(!rig.core.holdsFrame)
        #expect(rig.reports.isEmpty)
    }

    @Test("the next frame replaces the held one, which is dropped at the source and reported as a skip")
    func heldReplaced() {
        var rig = CaptureRig(.live)
        rig.read(0)
        rig.read(1)
        #expect(rig.counters.value("frames_dropped_at_source") == 1)
        #expect(rig.counters.value("frames_dropped_no-worker") == 1)
        #expect(rig.reports.isEmpty, "the run is reported later")
        rig.ready("a")
        #expect(rig.sent == ["1→a"])
        #expect(rig.reports == ["skip 42/0+1"], "flushed right after the next frame that went out")
    }

    @Test("consecutive drops make one run; a run is flushed before a hello and before the end")
    func runs() {
        var rig = CaptureRig(.live)
        for index in 0..<5 { rig.read(index) }  // 0...3 dropped, 4 held
        #expect(rig.reports.isEmpty)
        rig.advance(ms: 1000)
        rig.tick()
        #expect(rig.controls == ["hello 42/0", "skip 42/0+4", "hello 42/5"], "the run goes before the hello")
        rig.read(5)  // 4 dropped
        rig.ended()
        #expect(rig.next != .finished, "the held frame may still go within one interval")
        rig.advance(ms: 34)
        rig.tick()
        #expect(rig.reports == ["skip 42/0+4", "skip 42/4+2", "end 42/6"])
        #expect(rig.next == .finished)
    }

    @Test("at the end of the source the held frame still goes to a worker that frees up within one interval")
    func endGrace() {
        var rig = CaptureRig(.timed(fps: 10, followsMediaTime: false))
        rig.ready("a")
        rig.read(0)
        rig.advance(ms: 100)
        rig.read(1)
        rig.ended()
        #expect(rig.next == .wait(untilNs: rig.clockNs + 100_000_000))
        rig.advance(ms: 50)
        rig.ready("b")
        #expect(rig.sent == ["0→a", "1→b"])
        #expect(rig.reports == ["end 42/2"])
        #expect(rig.next == .finished)
    }

    @Test("a timed node's phase shifts its timeline once: seq 1 and later come that much after their place")
    func timelinePhase() {
        var rig = CaptureRig(.timed(fps: 10, followsMediaTime: false)) { $0.timelinePhaseNs = 40_000_000 }
        rig.ready("a")
        rig.read(0)
        #expect(rig.sent == ["0→a"])
        let started = rig.clockNs
        rig.read(1)
        #expect(rig.next == .wait(untilNs: started + 140_000_000))
        rig.ready("b")
        rig.advance(ms: 139)
        rig.tick()
        #expect(rig.sent == ["0→a"], "not due yet")
        rig.advance(ms: 1)
        rig.tick()
        #expect(rig.sent == ["0→a", "1→b"])
        rig.read(2)
        #expect(rig.next == .wait(untilNs: started + 240_000_000), "every later frame keeps the interval")
    }

    @Test("stopped while a frame waits for a worker: it is reported skipped, then the end")
    func stopWithWaitingFrame() {
        var rig = CaptureRig(.unpaced)
        rig.read(0)
        rig.stop()
        #expect(rig.reports == ["skip 42/0+1", "end 42/1"])
        #expect(rig.next == .finished)
    }
}

@Suite("CaptureCore: threads and assignments")
struct CaptureCoreCreditTests {
    @Test("threads go in the order they became idle; a repeated Idle keeps its place; a lapsed attachment is handed back")
    func renewalKeepsPlace() {
        var rig = CaptureRig(.live)
        rig.ready("a")
        rig.advance(ms: 10)
        rig.ready("b")
        for _ in 0..<8 {
            rig.advance(ms: 2000)
            rig.ready("a")  // renewed, still first in line
            rig.idle("b")  // idle, but not attached again
        }
        // b last attached 16 s ago: its attachment lapsed; a's is fresh
        rig.read(0)
        rig.read(1)
        #expect(rig.sent == ["0→a"])
        #expect(rig.core.holdsFrame)
        #expect(rig.counters.value("assignments_unattached") == 1, "b was assigned, and handed back")
        #expect(rig.requests.contains { $0.returned == ["b"] })
    }

    @Test("a thread silent for 3 s is forgotten by the broker; its attachment at the node lapses after 15 s")
    func expiry() {
        var rig = CaptureRig(.live)
        rig.ready("a")
        rig.advance(ms: 3100)
        rig.tick()
        #expect(rig.counters.value("dispatch_threads_expired") == 1)
        #expect(rig.core.attachedWorkers == 1, "the attachment outlives the broker's 3 s")
        rig.advance(ms: 11_900)
        rig.tick()
        #expect(rig.core.attachedWorkers == 1, "15 s exactly: still attached")
        rig.advance(ms: 100)
        rig.tick()
        #expect(rig.core.attachedWorkers == 0)
        #expect(rig.counters.value("attachments_expired") == 1)
        rig.read(0)
        #expect(rig.sent.isEmpty)
        #expect(rig.requests.last?.wanted == 1, "the node asks for a thread")
    }

    @Test("the statistics say how long frames waited from capture to send")
    func captureToSend() {
        var rig = CaptureRig(.live) { $0.statisticsIntervalNs = 1_000_000_000 }
        rig.attach("a")
        rig.read(0)  // held: no thread is idle yet
        rig.advance(ms: 30)
        rig.idle("a")  // the thread says Idle 30 ms later and gets the held frame
        rig.advance(ms: 100)
        rig.ready("a")
        rig.read(1)  // sent at once
        rig.advance(ms: 900)
        rig.tick()
        #expect(rig.sent == ["0→a", "1→a"])
        #expect(rig.counters.value("source_wait_us") == 30_000)
        let line = rig.outputs.flatMap(\.logs).first { $0.message == "capture statistics" }
        #expect(line?.metadata["figures"]?.contains("capture to send 15.00 ms/frame") == true, "\(String(describing: line))")
    }

    @Test("a thread that reconnects moves its attachment; two live threads sharing an id are told apart from reconnects and warned about")
    func duplicateIDs() {
        var rig = CaptureRig(.live)
        // Reconnects: each connection is new, none comes back.
        rig.attach("c1", worker: "w")
        rig.attach("c2", worker: "w")
        rig.attach("c3", worker: "w")
        rig.attach("c3", worker: "w")
        #expect(rig.counters.value("workers_moved") == 2)
        #expect(rig.counters.value("workers_duplicate_id") == 0)
        #expect(rig.core.attachedWorkers == 1)
        // A second live thread with the same id: the Readys alternate between two connections.
        rig.attach("c4", worker: "w")
        rig.attach("c3", worker: "w")
        rig.attach("c4", worker: "w")
        #expect(rig.counters.value("workers_duplicate_id") == 2)
        #expect(rig.core.attachedWorkers == 1, "one name, one attachment: the latest Ready wins")
        let warnings = rig.outputs.flatMap(\.logs).filter { $0.metadata["counter"] == "workers_duplicate_id" }
        #expect(warnings.count == 1, "warned once per interval")
        #expect(warnings.first?.metadata["worker"] == "w")
        // The frame goes to the connection that attached last.
        rig.idle("c4", worker: "w")
        rig.read(0)
        #expect(rig.sent == ["0→c4"])
    }

    @Test("a failed send hands the thread back as unreachable and the next assigned thread is tried")
    func failedSends() {
        var rig = CaptureRig(.live)
        rig.link.failures = ["a": .gone, "b": .full]
        rig.ready("a")
        rig.ready("b")
        rig.ready("c")
        rig.read(0)
        #expect(rig.sent == ["0→c"])
        #expect(rig.counters.value("worker_gone") == 1 && rig.counters.value("worker_full") == 1)
        #expect(rig.counters.value("frames_sent") == 1)
        #expect(rig.counters.value("dispatch_assignments_unreachable") == 2)
    }

    @Test("--max-workers: a thread attaching beyond the cap is refused, counted, and logged once per interval")
    func cap() {
        var rig = CaptureRig(.live) { $0.maxWorkers = 2 }
        rig.ready("a")
        rig.ready("b")
        rig.ready("c")
        rig.ready("d")
        #expect(rig.counters.value("attachments_refused_cap") == 2)
        #expect(rig.warnings.count == 1)
        rig.ready("a")  // a renewal is not refused
        #expect(rig.counters.value("attachments_refused_cap") == 2)
        rig.advance(ms: 5000)
        rig.ready("e")
        #expect(rig.warnings.count == 2)
        rig.ready("a")
        rig.ready("b")
        rig.read(0)
        rig.read(1)
        #expect(rig.sent == ["0→a", "1→b"])
    }

    @Test("an assignment the node cannot use is handed back: no frame waiting, or a thread that already holds one")
    func handBack() {
        var rig = CaptureRig(.live)
        rig.attach("a")
        rig.assign("a")
        #expect(rig.counters.value("assignments_returned") == 1, "nothing to send")
        #expect(rig.requests.last?.returned == ["a"])
        #expect(rig.requests.last?.wanted == 0)
        rig.assign("nobody")
        #expect(rig.requests.last?.returned == ["nobody"], "not attached (yet): handed back, not excluded for long")
        rig.read(0)
        #expect(rig.requests.last?.wanted == 1)
        rig.assign("a")
        #expect(rig.sent == ["0→a"])
        #expect(rig.requests.last?.wanted == 0)
        #expect(rig.requests.last?.assignmentsSeen == 3)
        let requests = rig.requests.count
        rig.assign(String(repeating: "n", count: 1 << 20))  // a megabyte of name: refused, never echoed back
        #expect(rig.counters.value("assignments_rejected_worker") == 1)
        #expect(rig.requests.count == requests)
    }

    @Test("while a frame waits, the request is repeated every second (a lost request or a restarted collector)")
    func requestRepeats() {
        var rig = CaptureRig(.live)
        rig.read(0)
        let first = rig.requests.count
        rig.advance(ms: 500)
        rig.tick()
        #expect(rig.requests.count == first)
        rig.advance(ms: 500)
        rig.tick()
        #expect(rig.requests.count == first + 1)
        #expect(rig.requests.last?.wanted == 1)
    }

    @Test("unpaced: the node asks for one thread per attached thread, up to its window, and reads one frame per assignment")
    func unpacedWindow() {
        var rig = CaptureRig(.unpaced) { $0.unpacedWindow = 3 }
        for name in ["a", "b", "c", "d", "e"] { rig.attach(name) }
        #expect(rig.requests.last?.wanted == 3)
        for name in ["a", "b", "c", "d", "e"] { rig.idle(name) }
        #expect(rig.core.waitingWorkers(at: rig.now) == 3)
        // Each frame sent frees a place in the window: the next idle thread is asked for, until none is idle.
        for payload in 0..<10 where rig.next == .read { rig.read(payload) }
        #expect(rig.sent == ["0→a", "1→b", "2→c", "3→d", "4→e"])
        #expect(rig.next == .wait(untilNs: nil))
        #expect(rig.requests.allSatisfy { $0.wanted <= 3 })
    }

    @Test("Ready values are bounded: version (dispatch protocol 1 refused by name), routing identity, worker id of any length")
    func readyBounds() {
        var rig = CaptureRig(.live)
        var credit = Ready(worker: "w")
        credit.version = 1
        rig.perform(rig.core.ready(credit, from: Array("x".utf8), at: rig.now))
        rig.perform(rig.core.ready(Ready(worker: "w"), from: [], at: rig.now))
        rig.perform(rig.core.ready(Ready(worker: "w"), from: Array(repeating: 7, count: 256), at: rig.now))
        rig.perform(rig.core.malformedReady(ProtocolError(.malformed, "test"), at: rig.now))
        rig.perform(rig.core.malformedReady(ProtocolError(.unsupportedVersion, "test"), at: rig.now))
        #expect(rig.counters.value("ready_malformed") == 1)
        #expect(rig.counters.value("ready_refused_version") == 2)
        #expect(rig.warnings.contains { $0.contains("dispatch protocol") })
        #expect(rig.counters.value("ready_refused_identity") == 2)
        #expect(rig.core.attachedWorkers == 0)
        let long = String(repeating: "é", count: 100_000)
        rig.attach("a", worker: long)
        #expect(rig.counters.value("ready_worker_id_truncated") == 1)
        rig.read(0)
        // A node knows the thread by its name cut to 256 bytes; the collector never assigns a longer one.
        rig.assign(long)
        #expect(rig.sent == [])
        #expect(rig.counters.value("assignments_rejected_worker") == 1, "a name over 256 bytes names no thread")
        rig.assign(String(decoding: long.utf8.prefix(CaptureRig.Core.maxWorkerIDBytes), as: UTF8.self))
        #expect(rig.sent == ["0→a"])
        #expect(rig.link.sent[0].worker.utf8.count <= CaptureRig.Core.maxWorkerIDBytes)
    }
}

@Suite("CaptureCore: epochs and hellos")
struct CaptureCoreEpochTests {
    @Test("a lost camera ends the epoch (held frame reported); when it is back a new, greater epoch starts at seq 0")
    func cameraLoss() {
        var rig = CaptureRig(.live)
        rig.ready("a")
        rig.read(0)
        rig.read(1)  // held
        rig.perform(rig.core.sourceLost(at: rig.now))
        #expect(rig.reports == ["skip 42/1+1", "end 42/2"])
        #expect(rig.counters.value("camera_lost") == 1)
        rig.advance(ms: 5000)
        rig.tick()
        #expect(rig.controls.filter { $0.hasPrefix("hello") }.count == 1, "no hellos for an ended epoch")
        rig.perform(rig.core.sourceBack(at: rig.now))
        let epoch = rig.core.epoch
        #expect(epoch == UInt64(rig.now.wallUs) && epoch > CaptureRig.epoch)
        #expect(rig.controls.last == "hello \(epoch)/0")
        rig.ready("a")
        rig.read(2)
        #expect(rig.link.sent.last?.header.epoch == epoch)
        #expect(rig.link.sent.last?.header.seq == 0)
        rig.stop()
        #expect(rig.reports.last == "end \(epoch)/1")
        #expect(rig.reports.filter { $0.hasPrefix("end") }.count == 2, "one StreamEnd per epoch")
    }

    @Test("a new epoch is greater than the last even with a wall clock behind it")
    func epochAfterClock() {
        let ahead = UInt64(CaptureRig.startWallUs) + 1_000_000_000
        var rig = CaptureRig(.live) { $0.epoch = ahead }
        rig.perform(rig.core.sourceLost(at: rig.now))
        rig.perform(rig.core.sourceBack(at: rig.now))
        #expect(rig.core.epoch == ahead + 1)
        #expect(rig.next == .read)
    }

    @Test("after epoch 2^64-1 there is no greater one: the camera coming back ends the node instead of reusing it")
    func lastEpoch() {
        var rig = CaptureRig(.live) { $0.epoch = UInt64.max }
        rig.perform(rig.core.sourceLost(at: rig.now))
        rig.perform(rig.core.sourceBack(at: rig.now))
        #expect(rig.core.epoch == UInt64.max)
        #expect(rig.next == .finished)
        #expect(rig.reports == ["end \(UInt64.max)/0"], "one StreamEnd for the epoch")
    }

    @Test("hellos keep coming every second while a frame waits for a credit, after the pending skips")
    func hellosWhileWaiting() {
        var rig = CaptureRig(.timed(fps: 25, followsMediaTime: false))
        rig.read(0)
        for _ in 0..<5 {
            rig.advance(ms: 500)
            rig.tick()
        }
        #expect(rig.next == .wait(untilNs: nil))
        #expect(rig.controls == ["hello 42/0", "hello 42/1", "hello 42/1"])
    }
}

@Suite("CaptureCore: the preview endpoint in hellos")
struct CapturePreviewHelloTests {
    @Test("every hello announces the preview endpoint; without one it is empty")
    func hellos() {
        var rig = CaptureRig(.live) { $0.previewEndpoint = "tcp://0.0.0.0:40123" }
        rig.advance(ms: 1000)
        rig.tick()
        let hellos = rig.outputs.flatMap(\.actions).compactMap { output -> Hello? in
            if case .control(.hello(let hello)) = output { return hello } else { return nil }
        }
        #expect(hellos.count == 2)
        #expect(hellos.allSatisfy { $0.previewEndpoint == "tcp://0.0.0.0:40123" })
        let plain = CaptureRig(.live)
        guard case .control(.hello(let hello)) = plain.outputs.first?.actions.first else {
            Issue.record("no hello")
            return
        }
        #expect(hello.previewEndpoint.isEmpty)
    }
}

@Suite("CaptureCore: a new active collector (failover)")
struct CaptureCoreFailoverTests {
    @Test("a new active collector hears the node's hello and request at once, its assignments numbered afresh")
    func aNewActiveHearsTheNodeAtOnce() {
        var rig = CaptureRig(.timed(fps: 10, followsMediaTime: false))
        rig.read(0)
        rig.ready("a")
        let hellos = rig.controls.filter { $0.hasPrefix("hello") }.count
        let requests = rig.requests.count
        rig.advance(ms: 10)
        rig.perform(rig.core.collectorChanged(at: rig.now))
        #expect(rig.controls.filter { $0.hasPrefix("hello") }.count == hellos + 1, "a hello now, not at the next second")
        #expect(rig.requests.count > requests && rig.requests.last?.assignmentsSeen == 0, "a request, its count from 0")
        #expect(rig.counters.value("collector_changes") == 1)
    }

    @Test("a finished stream's end is said again to a new active collector")
    func aFinishedStreamsEndIsSaidAgain() {
        var rig = CaptureRig(.unpaced)
        rig.ended()
        rig.tick()
        let ends = rig.reports.filter { $0.hasPrefix("end") }
        #expect(ends.count == 1)
        rig.perform(rig.core.collectorChanged(at: rig.now))
        #expect(rig.reports.filter { $0.hasPrefix("end") } == ends + ends)
    }
}
