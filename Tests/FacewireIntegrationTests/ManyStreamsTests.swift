import FacewireRuntime
import Foundation
import Testing

extension IntegrationTests {
    @Suite("Several capture nodes into one collector")
    struct ManyStreams {
        /// Two capture nodes, then a third started once the first two are flowing, feed one collector through two
        /// workers that were all started before the third capture existed: the workers learn its endpoint from the
        /// collector. Every stream must come out complete, in order, processed, and tracked (one face, one ID).
        @Test("two streams, then a third started later, through two earlier workers: all ordered, gap-free, tracked",
              .enabled(if: SharedFootage.isAvailable, "\(SharedFootage.missingMessage)"),
              .timeLimit(.minutes(15)))
        func thirdCaptureJoinsLater() async throws {
            let model = try #require(SharedFootage.yunet)
            let clips = ["a": "liveportrait_d19.mp4", "b": "liveportrait_d3.mp4", "c": "liveportrait_d0.mp4"]
            let frames = 60
            let cluster = try TestCluster("streams")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(5)
            let control = "tcp://127.0.0.1:\(ports[0])"
            _ = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[1])", ["--max-delay", "4000"])
            let tail = try await cluster.startTail(control: control, ["--events"])
            for index in 1...2 {
                _ = try await cluster.startWorker("worker-\(index)", control: control, ["--model", model.path])
            }
            func capture(_ stream: String, port: Int) throws {
                let video = try #require(SharedFootage.video(clips[stream]!))
                _ = try cluster.facewire("capture-\(stream)", [
                    "--role", "capture", "--source", video.path, "--stream", stream, "--frames", String(frames),
                    "--bind", "tcp://127.0.0.1:\(port)", "--collector", control, "--fps", "10",
                ])
            }
            try capture("a", port: ports[2])
            try capture("b", port: ports[3])
            try await tail.waitFor(.stdout, "frames of streams a and b") { lines in
                lines.contains { $0.contains("\"stream\":\"a\"") } && lines.contains { $0.contains("\"stream\":\"b\"") }
            }
            try capture("c", port: ports[4])
            try await tail.waitFor(.stdout, "three streamEnded lines") { lines in
                lines.filter { $0.contains("\"event\":\"streamEnded\"") }.count >= 3
            }

            let all = tail.lines(.stdout)
            for stream in ["a", "b", "c"] {
                let mine = all.filter { $0.contains("\"stream\":\"\(stream)\"") }
                let lines = try FrameLine.parseAll(mine)
                let problems = orderProblems(lines, count: frames)
                #expect(problems.isEmpty, "stream \(stream): \(problems)\n\(cluster.diagnostics())")
                // Live pacing sheds frames when the machine is busy (reported as dropped, so accounted above): how
                // many is a matter of speed, not checked here; a stream no worker serves would have none processed.
                let processed = lines.filter { $0.status == "processed" }.count
                print("[streams] \(stream): \(processed) of \(frames) processed")
                #expect(processed > 0, "stream \(stream): no frame processed")
                // Tracked: the one face of each clip keeps one ID for the stream.
                var ids: Set<Int> = []
                for line in mine {
                    let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                    for face in object?["faces"] as? [[String: Any]] ?? [] {
                        if let id = (face["trackingID"] as? NSNumber)?.intValue { ids.insert(id) }
                    }
                }
                #expect(ids.count == 1, "stream \(stream): tracking IDs \(ids.sorted())")
                #expect(mine.contains { $0.contains("\"event\":\"faceAppeared\"") }, "stream \(stream): no faceAppeared")
            }
        }
    }
}
