import FacewireRuntime
import Foundation
import Testing

extension IntegrationTests {
    @Suite("Workers slower than the camera")
    struct SlowWorkers {
        /// One one-thread worker with the default detector behind a capture node pacing 1080p frames at 120 frames/s:
        /// decoding a 1080p JPEG and detecting at the width such frames get takes this worker about 30 ms (about 30
        /// frames/s here), so it can take about a quarter of the frames, and a machine three times faster still sheds.
        /// (The test once paced 640×480 at 60 frames/s; the worker grew fast enough to keep up with that, and a test
        /// of shedding must not depend on the worker staying slow.) The stream must shed the rest as dropped, in order
        /// and gap-free, and latency must stay bounded instead of growing: every processed frame's capture-to-output
        /// time under --max-delay + one frame interval (the guarantee, not a speed figure; the typical value is one
        /// detection plus at most one interval).
        @Test("a fraction of the source rate: drops instead of lag, latency under max-delay + one interval",
              .timeLimit(.minutes(15)))
        func workersAtAThirdOfTheSourceRate() async throws {
            let frameCount = 240
            let fps = 120.0
            let maxDelay = 1000
            let cluster = try TestCluster("slow")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: frameCount, width: 1920, height: 1080)
            let ports = try freeLoopbackPorts(3)
            let control = "tcp://127.0.0.1:\(ports[0])"
            _ = try await cluster.startCollector(
                control: control, publish: "tcp://127.0.0.1:\(ports[1])", ["--max-delay", String(maxDelay)])
            let tail = try await cluster.startTail(control: control, ["--stream", "fast", "--exit-on-end"])
            _ = try await cluster.startWorker(control: control)
            _ = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", "fast", "--bind", "tcp://127.0.0.1:\(ports[2])",
                "--collector", control, "--fps", String(Int(fps)),
            ])
            let status = try await tail.waitForExit()
            #expect(status == 0, "\(cluster.diagnostics())")

            let raw = tail.lines(.stdout)
            let lines = try FrameLine.parseAll(raw)
            let problems = orderProblems(lines, count: frameCount)
            #expect(problems.isEmpty, "\(problems)")
            let processed = lines.filter { $0.status == "processed" }.count
            let dropped = lines.filter { $0.status == "dropped" }.count
            // How many are shed depends on the worker's speed; that some are, does not.
            #expect(processed > 0 && dropped > 0, "processed \(processed), dropped \(dropped): frames must be shed")
            var latencies: [Double] = []
            for line in raw {
                guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    object["status"] as? String == "processed",
                    let total = ((object["timings"] as? [String: Any])?["total"] as? NSNumber)?.doubleValue
                else { continue }
                latencies.append(total)
            }
            latencies.sort()
            let p99 = latencies[min(latencies.count - 1, Int(Double(latencies.count - 1) * 0.99))]
            let reasons = Dictionary(grouping: lines.filter { $0.status == "dropped" }, by: { $0.reason ?? "-" }).mapValues(\.count)
            print("[slow] processed \(processed), dropped \(dropped) \(reasons), latency p50 \(latencies[latencies.count / 2]) ms, p99 \(p99) ms, max \(latencies.last ?? 0) ms")
            #expect(p99 < Double(maxDelay) + 1000.0 / fps, "latency p99 \(p99) ms")
            // No growing lag: the last processed frames are no slower than the first ones by more than the bound.
            #expect(latencies.last ?? 0 < Double(maxDelay) + 1000.0 / fps, "latency max \(latencies.last ?? 0) ms")
        }
    }
}
