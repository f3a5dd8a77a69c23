import FacewireRuntime
import Foundation
import Testing

extension IntegrationTests {
    @Suite("A capture node restarted mid-stream")
    struct CaptureRestart {
        /// The capture node of a stream is SIGKILLed mid-stream, with frames at four slow worker threads, and a new
        /// one started for the same stream id. The new node's epoch starts the stream afresh; the old epoch stays
        /// open for its frames in flight (SPEC 9.6): every result the collector receives of it is published (none
        /// refused as late), it comes out ordered and gap-free from 0 and is ended once; the new epoch comes out
        /// complete from 0, with no confusion between the two epochs' sequence numbers.
        @Test("SIGKILL the capture node, start it again: two epochs, each ordered, gap-free and ended",
              .timeLimit(.minutes(15)))
        func newEpochAfterRestart() async throws {
            let cluster = try TestCluster("restart")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: 200, width: 320, height: 240)
            let ports = try freeLoopbackPorts(4)
            let control = "tcp://127.0.0.1:\(ports[0])"
            let collector = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[1])", ["--max-delay", "3000"])
            let tail = try await cluster.startTail(control: control, ["--stream", "cam", "--events"])
            // Four threads at 1 s a frame: frames are still at the threads when the new node's first hello opens the
            // new epoch (a node starts in well under a second).
            _ = try await cluster.startWorker(control: control, ["--threads", "4", "--detector", "synthetic", "--synthetic-ms", "1000"])
            let first = try cluster.facewire("capture-1", [
                "--role", "capture", "--source", frames.path, "--stream", "cam", "--bind", "tcp://127.0.0.1:\(ports[2])",
                "--collector", control, "--fps", "30",
            ])
            try await tail.waitFor(.stdout, "20 frame lines of the first epoch") { lines in
                lines.filter { $0.contains("\"status\"") }.count >= 20
            }
            first.killNow()
            let secondFrames = 12
            _ = try cluster.facewire("capture-2", [
                "--role", "capture", "--source", frames.path, "--stream", "cam", "--bind", "tcp://127.0.0.1:\(ports[3])",
                "--collector", control, "--fps", "max", "--frames", String(secondFrames),
            ])
            try await tail.waitFor(.stdout, "two streamEnded lines") { lines in
                lines.filter { $0.contains("\"event\":\"streamEnded\"") }.count >= 2
            }

            // Every result of either epoch that reached the collector was published: none refused as late.
            collector.stop()
            let stopped = collector.lines(.stderr).last { $0.contains("collector stopped") } ?? ""
            #expect(!stopped.isEmpty, "no final counters\n\(cluster.diagnostics())")
            #expect(!stopped.contains("late_after_end") && !stopped.contains("results_late"), "\(stopped)")
            let raw = tail.lines(.stdout)
            let lines = try FrameLine.parseAll(raw)
            let epochs = Array(Set(lines.map(\.epoch))).sorted()
            #expect(epochs.count == 2, "epochs \(epochs)\n\(cluster.diagnostics())")
            guard epochs.count == 2 else { return }
            let old = lines.filter { $0.epoch == epochs[0] }
            let new = lines.filter { $0.epoch == epochs[1] }
            // The old epoch's last frames may come out after the new epoch began; each epoch on its own is exact.
            let firstNew = raw.firstIndex { $0.contains("\"epoch\":\(epochs[1]),") } ?? raw.count
            let afterRestart = raw[firstNew...].filter { $0.contains("\"epoch\":\(epochs[0]),") && $0.contains("\"processed\"") }.count
            print("[restart] old epoch: \(old.count) frames, \(old.filter { $0.status == "dropped" }.count) dropped "
                  + "(\(old.filter { $0.reason == "superseded" }.count) superseded), \(afterRestart) processed after the new epoch began; "
                  + "new epoch: \(new.count) frames, \(new.filter { $0.status == "dropped" }.count) dropped")
            #expect(old.count >= 20)
            #expect(orderProblems(old, count: old.count).isEmpty, "old epoch: \(orderProblems(old, count: old.count))")
            #expect(orderProblems(new, count: secondFrames).isEmpty, "new epoch: \(orderProblems(new, count: secondFrames))")
            // The new node reads a frame only when the worker is idle (--fps max), so its frames are analysed rather
            // than shed; none of either epoch may be dropped for the other's sake.
            #expect(new.contains { $0.status == "processed" }, "the new epoch was analysed")
            #expect(!lines.contains { $0.status == "error" }, "no error lines expected")
            for epoch in epochs {
                let ends = raw.filter { $0.contains("\"event\":\"streamEnded\"") && $0.contains("\"epoch\":\(epoch),") }
                #expect(ends.count == 1, "epoch \(epoch): \(ends.count) streamEnded lines")
                // The end comes after every frame line of its epoch.
                let endIndex = raw.firstIndex { $0.contains("\"event\":\"streamEnded\"") && $0.contains("\"epoch\":\(epoch),") }
                let lastFrame = raw.lastIndex { $0.contains("\"status\"") && $0.contains("\"epoch\":\(epoch),") }
                if let endIndex, let lastFrame { #expect(endIndex > lastFrame, "epoch \(epoch) ended before its last frame") }
            }
        }

        /// A node restarted at the same endpoint has forgotten every attachment; the workers' sockets reconnect by
        /// themselves, and the threads must attach again when the collector announces the new epoch rather than at
        /// their next periodic Ready (SPEC 3.1).
        @Test("the capture node restarted on the same port: the threads attach again at its new epoch; both epochs whole",
              .timeLimit(.minutes(15)))
        func samePortRestart() async throws {
            let cluster = try TestCluster("restart-same-port")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: 200, width: 320, height: 240)
            let ports = try freeLoopbackPorts(3)
            let control = "tcp://127.0.0.1:\(ports[0])"
            let collector = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[1])", ["--max-delay", "3000"])
            let tail = try await cluster.startTail(control: control, ["--stream", "cam", "--events"])
            let worker = try await cluster.startWorker(control: control, ["--threads", "2", "--detector", "synthetic", "--synthetic-ms", "20"])
            let arguments = ["--role", "capture", "--source", frames.path, "--stream", "cam", "--bind", "tcp://127.0.0.1:\(ports[2])", "--collector", control]
            let first = try cluster.facewire("capture-1", arguments + ["--fps", "30"])
            try await tail.waitFor(.stdout, "10 frame lines of the first epoch") { lines in
                lines.filter { $0.contains("\"status\"") }.count >= 10
            }
            first.killNow()
            let secondFrames = 12
            _ = try cluster.facewire("capture-2", arguments + ["--fps", "max", "--frames", String(secondFrames)])
            try await tail.waitFor(.stdout, "two streamEnded lines") { lines in
                lines.filter { $0.contains("\"event\":\"streamEnded\"") }.count >= 2
            }
            collector.stop()
            #expect(worker.lines(.stderr).contains { $0.contains("capture node restarted") && $0.contains(":\(ports[2])") },
                    "the worker did not see the new epoch\n\(cluster.diagnostics())")
            let lines = try FrameLine.parseAll(tail.lines(.stdout))
            let epochs = Array(Set(lines.map(\.epoch))).sorted()
            #expect(epochs.count == 2, "epochs \(epochs)\n\(cluster.diagnostics())")
            guard epochs.count == 2 else { return }
            let old = lines.filter { $0.epoch == epochs[0] }
            let new = lines.filter { $0.epoch == epochs[1] }
            #expect(orderProblems(old, count: old.count).isEmpty, "old epoch: \(orderProblems(old, count: old.count))")
            #expect(orderProblems(new, count: secondFrames).isEmpty, "new epoch: \(orderProblems(new, count: secondFrames))")
            #expect(new.filter { $0.status == "processed" }.count == secondFrames, "the new epoch, unpaced, is analysed whole")
        }
    }
}
