import FacewireRuntime
import Foundation
import Testing

extension IntegrationTests {
    @Suite("facewire reset and statistics in the stream")
    struct ResetAndStatistics {
        /// A collector with a live stream: `facewire reset` answers 0 for it, 1 for an unknown stream, 2 when nothing
        /// answers; a tail with `--events --statistics` sees the trackingReset line and statistics lines in order.
        @Test("reset exit codes, and the tail sees trackingReset and statistics lines", .timeLimit(.minutes(15)))
        func resetAndStatistics() async throws {
            let cluster = try TestCluster("reset")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: 20, width: 160, height: 120)
            let ports = try freeLoopbackPorts(4)
            let control = "tcp://127.0.0.1:\(ports[0])"
            _ = try await cluster.startCollector(
                control: control, publish: "tcp://127.0.0.1:\(ports[1])", ["--stats-interval", "0.5"])
            let tail = try await cluster.startTail(control: control, ["--events", "--statistics", "--stream", "door"])
            _ = try await cluster.startWorker(control: control)
            _ = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", "door", "--bind", "tcp://127.0.0.1:\(ports[2])",
                "--collector", control, "--fps", "20", "--loop",
            ])
            _ = try await tail.waitFor(.stdout, "a frame line") { $0.contains { $0.contains("\"seq\":") } }

            let binary = try Locations.facewireBinary()
            let reset = try runCommand(binary, ["reset", "--collector", control, "--stream", "door"])
            #expect(reset.status == 0, "\(reset.output)")
            #expect(reset.output.contains("reset: door"))
            let unknown = try runCommand(binary, ["reset", "--collector", control, "--stream", "attic"])
            #expect(unknown.status == 1, "\(unknown.output)")
            #expect(unknown.output.contains("no open stream named 'attic'"))
            let nobody = try runCommand(binary, ["reset", "--collector", "tcp://127.0.0.1:\(ports[3])", "--timeout", "1"])
            #expect(nobody.status == 2, "\(nobody.output)")
            #expect(nobody.output.contains("no answer from the collector"))

            _ = try await tail.waitFor(.stdout, "a statistics line after the reset") { lines in
                guard let reset = lines.firstIndex(where: { $0.contains("\"event\":\"trackingReset\"") }) else { return false }
                return lines[reset...].contains { $0.contains("\"event\":\"statistics\"") }
            }
            // Sequences are counted from the first frame the tail printed.
            var firstSeq: Int?
            var emitted = 0
            var resetSeq: Int?
            for line in tail.lines(.stdout) {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
                switch object["event"] as? String {
                case nil:
                    let seq = try #require(object["seq"] as? Int)
                    if firstSeq == nil { firstSeq = seq }
                    #expect(seq == (firstSeq ?? 0) + emitted, "frames in order, gap-free")
                    emitted += 1
                case "trackingReset":
                    // Every frame before the reset's seq was printed before it, and none after.
                    resetSeq = try #require(object["seq"] as? Int)
                    #expect(resetSeq == (firstSeq ?? 0) + emitted, "trackingReset at \(resetSeq ?? -1) after \(emitted) frames")
                case "statistics":
                    if let firstSeq {
                        #expect(object["nextSeq"] as? Int == firstSeq + emitted, "a window's nextSeq is the frame after it")
                    }
                    #expect(object["dropped"] is [String: Any])
                default: break
                }
            }
            #expect(resetSeq != nil)
        }
    }
}
