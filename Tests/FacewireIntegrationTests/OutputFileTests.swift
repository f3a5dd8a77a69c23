import FacewireRuntime
import Foundation
import Testing

extension IntegrationTests {
    @Suite("The collector's --output file")
    struct OutputFile {
        /// A cluster whose collector writes `--output` with a small rotation size is stopped with SIGTERM mid-stream.
        /// Every line it wrote must be whole, in order, gap-free from the first frame, across the rotated segments
        /// and the active file, and no segment may pass the size limit.
        @Test("SIGTERM mid-stream: every written line whole, ordered and gap-free across rotated files",
              .timeLimit(.minutes(15)))
        func sigtermKeepsEveryLine() async throws {
            let cluster = try TestCluster("output")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: 400, width: 320, height: 240)
            let output = cluster.directory.appendingPathComponent("results.jsonl")
            let maxBytes = 4000
            let ports = try freeLoopbackPorts(3)
            let control = "tcp://127.0.0.1:\(ports[0])"
            let collector = try await cluster.startCollector(
                control: control, publish: "tcp://127.0.0.1:\(ports[1])",
                ["--output", output.path, "--output-max-bytes", String(maxBytes)])
            _ = try await cluster.startWorker(control: control)
            _ = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", "out", "--bind", "tcp://127.0.0.1:\(ports[2])",
                "--collector", control, "--fps", "max", "--loop",
            ])

            func segments() throws -> [URL] {
                try FileManager.default.contentsOfDirectory(at: cluster.directory, includingPropertiesForKeys: nil)
                    .filter { $0.lastPathComponent.hasPrefix("results-") && $0.pathExtension == "jsonl" }
                    .sorted { $0.lastPathComponent < $1.lastPathComponent }
            }
            // Wait for at least three rotations, then stop the collector while frames keep coming.
            let deadline = ContinuousClock.now + .seconds(120)
            while try segments().count < 3 {
                guard ContinuousClock.now < deadline else {
                    throw HarnessError("no third rotation within 120 s\n\(cluster.diagnostics())")
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            collector.signal(SIGTERM)
            let status = try await collector.waitForExit()
            #expect(status == 0, "collector exit status after SIGTERM\n\(cluster.diagnostics())")
            #expect(collector.text(.stderr).contains("output closed"), "the collector closes (fsyncs) its file on SIGTERM")

            let files = try segments() + [output]
            #expect(files.first?.lastPathComponent == "results-000001.jsonl")
            var seqs: [Int] = []
            for file in files {
                let data = try Data(contentsOf: file)
                #expect(data.isEmpty || data.last == UInt8(ascii: "\n"), "\(file.lastPathComponent) ends mid-line")
                if file != output {
                    #expect(data.count <= maxBytes, "\(file.lastPathComponent) has \(data.count) bytes, over \(maxBytes)")
                }
                for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                    // Every line is a whole JSON object: a frame, or an event.
                    if let frame = try FrameLine.parse(String(line)) { seqs.append(frame.seq) }
                }
            }
            #expect(seqs.count >= 40, "only \(seqs.count) frame lines written")
            #expect(seqs == Array(0..<seqs.count), "frame lines out of order or with gaps: \(seqs.prefix(60))")
        }
    }
}
