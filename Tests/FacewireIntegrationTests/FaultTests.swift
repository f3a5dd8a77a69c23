import FacewireRuntime
import Foundation
import Testing

/// Faults production brings, with real processes: a worker that hangs, and a collector that dies and comes back.
extension IntegrationTests {
    @Suite("Faults: a hung worker, a restarted collector")
    struct Faults {
        /// Two one-thread workers; one is stopped with SIGSTOP mid-stream (a hang: its connections stay open). The
        /// stream must complete in order; only frames handed to the hung worker may be dropped (as `timeout`, after
        /// --max-delay); everything else is processed by the other worker.
        @Test("SIGSTOP one of two workers: the stream goes on, only the frames it held are dropped", .timeLimit(.minutes(5)))
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
            let after = lines.filter { $0.status == "processed" && $0.worker == "hung/t0" }.map(\.seq).max() ?? -1
            #expect(lines.filter { $0.seq > after + 2 }.allSatisfy { $0.status == "processed" && $0.worker == "alive/t0" })
            print("[hang] \(dropped.count) frames dropped (\(dropped.map(\.seq))), the rest processed")
        }

        /// SIGTERM drains a worker: it finishes the frame in hand (and any already delivered to it), sends the
        /// results and exits 0. With a second worker the stream loses nothing at all.
        @Test("SIGTERM one of two workers mid-stream: it finishes what it holds, nothing is dropped", .timeLimit(.minutes(5)))
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

        /// The collector is killed (SIGKILL) mid-stream and started again on the same addresses. The capture node, the
        /// worker and the tail are left alone: they reconnect by themselves, and the stream resumes within 2 s of the
        /// new collector listening.
        @Test("collector SIGKILLed and restarted: the others reconnect on their own, the stream resumes within 2 s",
              .timeLimit(.minutes(5)))
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
            _ = try await cluster.startWorker(control: control)
            _ = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", "cr", "--bind", "tcp://127.0.0.1:\(ports[2])",
                "--collector", control, "--fps", "15", "--loop",
            ])
            _ = try await tail.waitFor(.stdout, "15 frames") { $0.count >= 15 }
            first.killNow()
            let before = try FrameLine.parseAll(tail.lines(.stdout))
            let lastBefore = before.map(\.seq).max() ?? -1
            try await Task.sleep(for: .milliseconds(500))

            let second = try cluster.facewire("collector-2", ["--role", "collector", "--bind", control, "--publish", publish])
            try await second.waitForLine(containing: "collector listening")
            let listening = ContinuousClock.now
            _ = try await tail.waitFor(.stdout, timeout: .seconds(30), "a frame after the restart") { lines in
                (try? FrameLine.parseAll(lines).contains { $0.seq > lastBefore && $0.status == "processed" }) == true
            }
            let resumed = ContinuousClock.now - listening
            print("[restart] the stream resumed \(resumed) after the new collector listened")
            #expect(resumed < .seconds(2), "the stream resumed only after \(resumed)")

            // After the restart: still one ordered stream per epoch, with no frame twice.
            _ = try await tail.waitFor(.stdout, "20 more frames") { $0.count >= before.count + 20 }
            let after = try FrameLine.parseAll(tail.lines(.stdout)).dropFirst(before.count)
            let seqs = after.map(\.seq)
            #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "after the restart: \(seqs)")
            #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $1 == $0 + 1 }, "gaps after the restart: \(seqs)")
        }
    }
}
