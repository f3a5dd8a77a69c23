import FacewireProtocol
import FacewireRuntime
import Foundation
import Testing
import ZeroMQ

/// Faults production brings, with real processes: a worker that hangs, and a collector that dies and comes back.
extension IntegrationTests {
    @Suite("Faults: a hung worker, a restarted collector")
    struct Faults {
        /// Two one-thread workers; one is stopped with SIGSTOP mid-stream (a hang: its connections stay open). The
        /// stream must complete in order; only frames handed to the hung worker may be dropped (as `timeout`, after
        /// --max-delay); everything else is processed by the other worker.
        @Test("SIGSTOP one of two workers: the stream goes on, only the frames it held are dropped", .timeLimit(.minutes(15)))
        func hungWorker() async throws {
            let frameCount = 120
            let cluster = try TestCluster("hang")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: frameCount, width: 640, height: 480)
            let ports = try freeLoopbackPorts(3)
            let control = "tcp://127.0.0.1:\(ports[0])"
            _ = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[1])", ["--max-delay", "1000"])
            let tail = try await cluster.startTail(control: control, ["--stream", "hang", "--exit-on-end"])
            let hung = try await cluster.startWorker("hung", control: control, ["--id", "hung"])
            _ = try await cluster.startWorker("alive", control: control, ["--id", "alive"])
            let capture = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", "hang", "--bind", "tcp://127.0.0.1:\(ports[2])",
                "--collector", control, "--fps", "max", "--log-level", "debug",
            ])
            _ = try await tail.waitFor(.stdout, "20 frames, one of them from the worker to hang") { lines in
                lines.count >= 20 && lines.contains { $0.contains("\"worker\":\"hung/t0\"") }
            }
            hung.signal(SIGSTOP)
            defer { hung.signal(SIGCONT) }
            #expect(try await tail.waitForExit() == 0, "\(cluster.diagnostics())")
            _ = try await capture.waitForExit()

            let lines = try FrameLine.parseAll(tail.lines(.stdout))
            #expect(orderProblems(lines, count: frameCount).isEmpty, "\(orderProblems(lines, count: frameCount))")
            let dispatched = Dictionary(dispatchedFrames(inCaptureLog: capture.lines(.stderr)).map { ($0.seq, $0.worker) }) { $1 }
            let dropped = lines.filter { $0.status == "dropped" }
            for line in dropped {
                #expect(line.reason == "timeout", "seq \(line.seq) dropped as \(line.reason ?? "-")")
                #expect(dispatched[line.seq]?.hasPrefix("hung") == true, "seq \(line.seq) was dropped but went to \(dispatched[line.seq] ?? "nobody")")
            }
            // A hung worker thread holds at most the frame it was working on and the one its credit had asked for.
            #expect(dropped.count <= 2, "\(dropped.count) frames dropped: \(dropped.map(\.seq))")
            // Every frame after the last one the hung worker was given is processed by the other worker.
            let lastToHung = dispatched.filter { $0.value.hasPrefix("hung") }.map(\.key).max() ?? -1
            let later = lines.filter { $0.seq > lastToHung }
            #expect(!later.isEmpty && later.allSatisfy { $0.status == "processed" && $0.worker == "alive/t0" }, "\(later.filter { $0.status != "processed" }.map(\.seq))")
            print("[hang] \(dropped.count) frames dropped (\(dropped.map(\.seq))), the rest processed")
        }

        /// SIGTERM drains a worker: it finishes the frame in hand (and any already delivered to it), sends the
        /// results and exits 0. With a second worker the stream loses nothing at all.
        @Test("SIGTERM one of two workers mid-stream: it finishes what it holds, nothing is dropped", .timeLimit(.minutes(15)))
        func workerDrainsOnSigterm() async throws {
            let frameCount = 80
            let cluster = try TestCluster("drain")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            // Large frames, so that the signal lands while a frame is being analysed.
            try SyntheticFrames.writeFolder(frames, count: frameCount, width: 1280, height: 720)
            let (control, captureBind, tail, _) = try await cluster.startStreamCluster(stream: "drain", tailArguments: ["--exit-on-end"])
            let leaving = try await cluster.startWorker("leaving", control: control, ["--id", "leaving"])
            _ = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", "drain", "--bind", captureBind,
                "--collector", control, "--fps", "max",
            ])
            _ = try await tail.waitFor(.stdout, "10 frames, one from the worker that will leave") { lines in
                lines.count >= 10 && lines.contains { $0.contains("\"worker\":\"leaving/t0\"") }
            }
            leaving.signal(SIGTERM)
            #expect(try await leaving.waitForExit() == 0, "\(leaving.tail(.stderr))")
            #expect(try await tail.waitForExit() == 0, "\(cluster.diagnostics())")
            let lines = try FrameLine.parseAll(tail.lines(.stdout))
            #expect(orderProblems(lines, count: frameCount).isEmpty, "\(orderProblems(lines, count: frameCount))")
            let dropped = lines.filter { $0.status != "processed" }
            #expect(dropped.isEmpty, "dropped: \(dropped.map { "\($0.seq) \($0.reason ?? "")" })\n\(leaving.tail(.stderr))")
        }

        /// The protocol's own heartbeat: an idle thread says Idle every second, and the collector forgets one it has
        /// not heard from for 3 s. Here a thread played by hand says Idle until its first frame and then falls silent
        /// (hung); the capture node (one frame every 4 s) must not send it the second frame, which is dropped at the
        /// source (`no-worker`), reported.
        @Test("a thread that falls silent is not assigned again: no frame goes to it", .timeLimit(.minutes(15)))
        func silentThreadIsNotAssigned() async throws {
            let cluster = try TestCluster("credit")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: 2, width: 160, height: 120)
            let ports = try freeLoopbackPorts(3)
            let endpoint = "tcp://127.0.0.1:\(ports[0])"
            let control = "tcp://127.0.0.1:\(ports[1])"
            _ = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[2])")
            let context = ZMQContext()
            let thread = try HandThread("silent", context: context, capture: endpoint, collector: control)
            defer { thread.close() }
            let capture = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", "credit", "--bind", endpoint, "--collector", control,
                "--fps", "0.25", "--frames", "2",
            ])
            try await capture.waitForLine(containing: "capture publishing")
            var received = 0
            let deadline = Date().addingTimeInterval(30)
            while capture.isRunning, Date() < deadline {
                received += try thread.receive(within: 200)
                if received == 0 {
                    try thread.attach()
                    try thread.idle()
                }
            }
            #expect(try await capture.waitForExit() == 0)
            #expect(received == 1, "the silent thread got \(received) frames")
            let finished = try #require(capture.lines(.stderr).first { $0.contains("capture finished") })
            #expect(finished.contains("frames_dropped_no-worker=1"), "\(finished)")
        }

        /// The collector is killed (SIGKILL) mid-stream and started again on the same addresses. The capture node, the
        /// worker and the tail are left alone: they reconnect by themselves (none of them restarts or exits), the
        /// stream resumes in the same epoch, and the tail's frames, before and after the restart, are one stream in
        /// increasing `seq` with no seq twice. The frames whose results were inside the killed collector (buffered, in
        /// its sockets) are lost with it, and a new collector starts at the base it learns (SPEC.md 9.2: the lowest of
        /// the capture hello's `next_seq` and the results it receives), emitting nothing below it (16, "No end without
        /// `StreamEnd`"). The tail sees the jump and prints a line for each of those frames, dropped as `missed`
        /// (SPEC.md 10): every seq from the first to the last has exactly one line. What is asserted: no gap; the
        /// `missed` lines are one run, at the restart (none before it, none after it), and exactly what the tail
        /// counted as missed (its `frames missed` warning, RN §5.1). How long the recovery took is printed (a timing
        /// figure, not an assertion).
        @Test("collector SIGKILLed and restarted: the others reconnect on their own, the stream resumes in order with every seq once; the frames lost at the restart are the tail's `missed` lines and its count",
              .timeLimit(.minutes(15)))
        func collectorRestart() async throws {
            let cluster = try TestCluster("restart-collector")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: 60, width: 320, height: 240)
            let ports = try freeLoopbackPorts(3)
            let control = "tcp://127.0.0.1:\(ports[0])"
            let publish = "tcp://127.0.0.1:\(ports[1])"
            let first = try await cluster.startCollector(control: control, publish: publish)
            let tail = try await cluster.startTail(control: control, ["--stream", "cr"])
            let worker = try await cluster.startWorker(control: control)
            let capture = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", "cr", "--bind", "tcp://127.0.0.1:\(ports[2])",
                "--collector", control, "--fps", "15", "--loop",
            ])
            _ = try await tail.waitFor(.stdout, "15 frames") { $0.count >= 15 }
            first.killNow()
            let before = try FrameLine.parseAll(tail.lines(.stdout))
            let lastBefore = before.map(\.seq).max() ?? -1
            let epochs = Set(before.map(\.epoch))
            try await Task.sleep(for: .milliseconds(500))

            let second = try cluster.facewire("collector-2", ["--role", "collector", "--bind", control, "--publish", publish])
            try await second.waitForLine(containing: "collector listening")
            let listening = ContinuousClock.now
            _ = try await tail.waitFor(.stdout, timeout: .seconds(30), "a frame after the restart") { lines in
                (try? FrameLine.parseAll(lines).contains { $0.seq > lastBefore && $0.status == "processed" }) == true
            }
            print("[restart] the stream resumed \(ContinuousClock.now - listening) after the new collector listened")
            // Recovery by reconnection alone: the same processes, the same capture epoch.
            #expect(capture.isRunning && worker.isRunning && tail.isRunning, "\(cluster.diagnostics())")
            #expect(epochs.count == 1, "before the restart: epochs \(epochs)")
            let resumed = try FrameLine.parseAll(tail.lines(.stdout)).dropFirst(before.count)
            #expect(Set(resumed.map(\.epoch)) == epochs, "the stream went on in a new epoch: the capture node restarted")
            #expect(resumed.contains { $0.status == "processed" && $0.worker != nil }, "no frame processed after the restart")

            // Before and after the restart together: one epoch, every seq exactly once and in increasing order (a
            // dropped run's line standing for its runLength seqs), the frames lost at the restart as `missed` lines.
            _ = try await tail.waitFor(.stdout, "20 more frames") { $0.count >= before.count + 20 }
            let stdout = tail.lines(.stdout)
            let all = try FrameLine.parseAll(stdout)
            #expect(Set(all.map(\.epoch)) == epochs, "epochs across the restart: \(Set(all.map(\.epoch)))")
            let spans = try Self.seqSpans(stdout)
            #expect(spans.count == all.count)
            var disorder: [String] = []
            var gaps: [String] = []
            for (a, b) in zip(spans, spans.dropFirst()) {
                let expected = a.seq + a.count
                if b.seq < expected {
                    disorder.append("seq \(b.seq) follows \(a.seq)\(a.count > 1 ? " (a run of \(a.count))" : "")")
                } else if b.seq > expected {
                    gaps.append("\(expected - 1) → \(b.seq)")
                }
            }
            let seqs = spans.map(\.seq)
            #expect(disorder.isEmpty, "not one ordered stream across the restart: \(disorder.prefix(10)) in \(seqs)")
            #expect(gaps.isEmpty, "seqs without a line: \(gaps) in \(seqs)")
            // The `missed` lines: one run of consecutive seqs, after the last frame the tail had before the kill.
            let missed = zip(all, spans).filter { $0.0.reason == "missed" }.map(\.1)
            var runs: [(first: Int, count: Int)] = []
            for span in missed {
                if let last = runs.last, last.first + last.count == span.seq {
                    runs[runs.count - 1].count += span.count
                } else {
                    runs.append((span.seq, span.count))
                }
            }
            #expect(runs.count <= 1, "more than the one run of missed frames of the restart: \(runs)")
            #expect(runs.allSatisfy { $0.first > lastBefore }, "missed frames before the kill (last seq then \(lastBefore)): \(runs)")
            #expect(zip(all, spans).allSatisfy { $0.0.reason != "missed" || ($0.0.status == "dropped" && $0.0.worker == nil) })
            // Every missing seq is accounted where the protocol accounts for it: the tail's own count of frames it never got.
            let counted = Self.missedWarnings(tail.lines(.stderr), stream: "cr")
            #expect(
                counted.map { [$0.before, $0.missed] } == runs.map { [$0.first + $0.count, $0.count] },
                "the tail counted \(counted) as missed; its missed lines were \(runs)")
            print("[restart] \(runs.first?.count ?? 0) frames lost with the collector (seq \(runs.first.map { "\($0.first)..<\($0.first + $0.count)" } ?? "none"))")
        }

        /// The seqs of a tail's frame lines, in order: each line's `seq` and how many seqs it stands for (`runLength`
        /// for a dropped run, SPEC.md 9.1; otherwise 1). Event lines are left out.
        static func seqSpans(_ lines: [String]) throws -> [(seq: Int, count: Int)] {
            try lines.compactMap { line -> (seq: Int, count: Int)? in
                guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                    throw HarnessError("not a JSON object: \(line)")
                }
                if object["event"] != nil { return nil }
                guard let seq = (object["seq"] as? NSNumber)?.intValue else { throw HarnessError("frame line without seq: \(line)") }
                return (seq, (object["runLength"] as? NSNumber)?.intValue ?? 1)
            }
        }

        /// The tail's `frames missed` warnings for `stream` (text log format: `before=SEQ missed=N` among the
        /// metadata): the seq each gap ended before and how many frames it missed.
        static func missedWarnings(_ lines: [String], stream: String) -> [(before: Int, missed: Int)] {
            lines.compactMap { line -> (before: Int, missed: Int)? in
                guard line.contains("frames missed") else { return nil }
                let tokens = line.split(separator: " ")
                guard tokens.contains(Substring("stream=\(stream)")),
                    let before = tokens.first(where: { $0.hasPrefix("before=") }).flatMap({ Int($0.dropFirst("before=".count)) }),
                    let missed = tokens.first(where: { $0.hasPrefix("missed=") }).flatMap({ Int($0.dropFirst("missed=".count)) })
                else { return nil }
                return (before, missed)
            }
        }
    }
}
