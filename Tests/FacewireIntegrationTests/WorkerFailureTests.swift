import FacewireRuntime
import Foundation
import Testing

/// Every integration suite is nested in this one so that the whole target runs one test at a time: the
/// clusters compete for the same two cores, and a loaded machine turns slow frames into drops.
@Suite("facewire integration (real processes on TCP)", .serialized)
struct IntegrationTests {}

extension IntegrationTests {
    @Suite("A worker killed mid-stream")
    struct WorkerFailure {
        /// Collector, two one-thread workers, a capture node at --fps max and a tail. The victim is SIGKILLed
        /// once the tail has shown some of its frames; the stream must still complete, and exactly the frames
        /// the victim took and never answered must come out as dropped.
        @Test("SIGKILL one of two workers mid-stream: complete ordered stream, exactly its lost frames dropped",
              .timeLimit(.minutes(15)))
        func sigkillWorkerMidStream() async throws {
            let frameCount = 150
            let cluster = try TestCluster("kill")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            // 1280×720: large enough that every frame costs the worker real work (decode + detect).
            try SyntheticFrames.writeFolder(frames, count: frameCount, width: 1280, height: 720)

            let ports = try freeLoopbackPorts(3)
            let control = "tcp://127.0.0.1:\(ports[0])"
            let stream = "kill-test"
            let victimID = "fw-victim"
            let survivorID = "fw-survivor"

            // A generous --max-delay: only frames that are really lost may time out, never a slow one.
            let collector = try cluster.facewire("collector", [
                "--role", "collector", "--bind", control, "--publish", "tcp://127.0.0.1:\(ports[1])", "--max-delay", "4000",
            ])
            try await collector.waitForLine(containing: "collector listening")
            let tail = try cluster.facewire("tail", [
                "--role", "tail", "--collector", control, "--stream", stream, "--exit-on-end", "--log-level", "debug",
            ])
            try await tail.waitForLine(containing: "tail subscribed")
            let victim = try cluster.facewire("worker-victim", [
                "--role", "worker", "--collector", control, "--threads", "1", "--id", victimID,
            ])
            let survivor = try cluster.facewire("worker-survivor", [
                "--role", "worker", "--collector", control, "--threads", "1", "--id", survivorID,
            ])
            try await victim.waitForLine(containing: "worker running")
            try await survivor.waitForLine(containing: "worker running")
            let capture = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", stream, "--bind", "tcp://127.0.0.1:\(ports[2])",
                "--collector", control, "--fps", "max", "--log-level", "debug",
            ])

            // Wait for ~20 lines, some of them from the victim.
            let victimThread = "\(victimID)/t0"
            let survivorThread = "\(survivorID)/t0"
            try await tail.waitFor(.stdout, "20 frame lines including one from \(victimThread)") { lines in
                lines.count >= 20 && lines.contains { $0.contains("\"worker\":\"\(victimThread)\"") }
            }
            victim.killNow()
            #expect(victim.wasSignalled, "the victim must die of SIGKILL")
            // The victim is gone: every frame dispatched from now on cannot be processed by it.
            let dispatchedBeforeKill = dispatchedFrames(inCaptureLog: capture.lines(.stderr))
            let lastSeqBeforeKill = dispatchedBeforeKill.map(\.seq).max() ?? -1
            #expect(lastSeqBeforeKill < frameCount - 1, "the kill must land mid-stream: capture had already dispatched every frame")

            let tailStatus = try await tail.waitForExit()
            #expect(tailStatus == 0, "tail --exit-on-end must exit 0 at the end of the stream\n\(cluster.diagnostics())")
            let captureStatus = try await capture.waitForExit()
            #expect(captureStatus == 0, "capture must exit 0 at the end of its source\n\(cluster.diagnostics())")
            #expect(survivor.isRunning && collector.isRunning, "\(cluster.diagnostics())")

            let lines = try FrameLine.parseAll(tail.lines(.stdout))
            let problems = orderProblems(lines, count: frameCount)
            #expect(problems.isEmpty, "stream not complete and ordered: \(problems)")
            #expect(lines.allSatisfy { $0.stream == stream })
            #expect(lines.allSatisfy { $0.status == "processed" || $0.status == "dropped" }, "no error lines expected")

            let dispatched = dispatchedFrames(inCaptureLog: capture.lines(.stderr))
            #expect(dispatched.map(\.seq).sorted() == Array(0..<frameCount),
                    "with --fps max the capture dispatches every frame exactly once (debug log has \(dispatched.count) dispatch lines)")
            #expect(Set(dispatched.map(\.worker)).isSubset(of: [victimThread, survivorThread]),
                    "unknown workers in the dispatch log: \(Set(dispatched.map(\.worker)))")

            let toVictim = Set(dispatched.filter { $0.worker == victimThread }.map(\.seq))
            let toSurvivor = Set(dispatched.filter { $0.worker == survivorThread }.map(\.seq))
            let processedByVictim = Set(lines.filter { $0.status == "processed" && $0.worker == victimThread }.map(\.seq))
            let dropped = Set(lines.filter { $0.status == "dropped" }.map(\.seq))
            let lostByVictim = toVictim.subtracting(processedByVictim)

            #expect(!processedByVictim.isEmpty, "the victim processed frames before it was killed")
            #expect(dropped.isSubset(of: toVictim),
                    "dropped frames not dispatched to the victim: \(dropped.subtracting(toVictim).sorted())")
            #expect(lostByVictim.isSubset(of: dropped),
                    "frames the victim took and never answered, not emitted as dropped: \(lostByVictim.subtracting(dropped).sorted())")
            #expect(dropped.isDisjoint(with: toSurvivor),
                    "frames of the surviving worker dropped: \(dropped.intersection(toSurvivor).sorted())")
            #expect(lines.filter { $0.status == "dropped" }.allSatisfy { $0.reason == "timeout" },
                    "a lost frame is dropped for timeout: \(lines.filter { $0.status == "dropped" }.map { "\($0.seq):\($0.reason ?? "-")" })")

            // After the kill, everything processed comes from the survivor.
            let processedAfterKill = lines.filter { $0.status == "processed" && $0.seq > lastSeqBeforeKill }
            #expect(!processedAfterKill.isEmpty, "frames were processed after the kill")
            let wrongWorker = processedAfterKill.filter { $0.worker != survivorThread }
            #expect(wrongWorker.isEmpty,
                    "frames dispatched after the kill processed by someone else: \(wrongWorker.map { "\($0.seq):\($0.worker ?? "-")" })")
            #expect(processedByVictim.allSatisfy { $0 <= lastSeqBeforeKill })
            // Every processed line names the worker the capture gave the frame to.
            let assigned = Dictionary(dispatched.map { ($0.seq, $0.worker) }, uniquingKeysWith: { first, _ in first })
            let mismatched = lines.filter { $0.status == "processed" && assigned[$0.seq] != $0.worker }
            #expect(mismatched.isEmpty, "processed by a worker other than the one dispatched to: \(mismatched.map(\.seq))")
        }
    }
}
