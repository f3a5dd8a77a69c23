import FacewireRuntime
import Foundation
import Testing

extension IntegrationTests {
    @Suite("Several capture nodes in one process (--source and --stream once per camera)")
    struct CaptureGroup {
        /// Three sources in one capture process, through one real worker: each is a node of its own (its own port, epoch
        /// and stream), every stream comes out whole and in order, and the process exits 0 once all three have ended.
        @Test("three --source/--stream pairs in one process: three whole, ordered streams, each with its own endpoint",
              .timeLimit(.minutes(15)))
        func threeNodesInOneProcess() async throws {
            let cluster = try TestCluster("capture-group")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(3)
            let control = "tcp://127.0.0.1:\(ports[0])"
            _ = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[1])")
            let tail = try await cluster.startTail(control: control, ["--events"])
            _ = try await cluster.startWorker(control: control)
            let folder = cluster.directory.appendingPathComponent("frames")
            _ = try SyntheticFrames.writeFolder(folder, count: 12, width: 320, height: 240)
            let streams = ["north", "south", "gate"]
            let frames = 12
            let capture = try cluster.facewire("capture", [
                "--role", "capture", "--bind", "tcp://127.0.0.1:*", "--collector", control, "--fps", "max",
                "--frames", String(frames), "--metrics-port", String(ports[2]), "--metrics-host", "127.0.0.1",
            ] + streams.flatMap { ["--source", folder.path, "--stream", $0] })
            try await tail.waitFor(.stdout, "three streamEnded lines") { lines in
                lines.filter { $0.contains("\"event\":\"streamEnded\"") }.count >= streams.count
            }
            #expect(try await capture.waitForExit() == 0, "\(capture.tail(.stderr))")

            let all = tail.lines(.stdout)
            for stream in streams {
                let lines = try FrameLine.parseAll(all.filter { $0.contains("\"stream\":\"\(stream)\"") })
                let problems = orderProblems(lines, count: frames)
                #expect(problems.isEmpty, "stream \(stream): \(problems)\n\(cluster.diagnostics())")
                // --fps max waits for a thread: nothing is dropped at the source.
                #expect(lines.filter { $0.status == "processed" }.count == frames, "stream \(stream)")
            }
            let log = capture.text(.stderr)
            #expect(log.contains("capture nodes in one process"))
            // Each node bound a port of its own and logged its own end.
            let endpoints = Set(log.split(separator: "\n").filter { $0.contains("capture publishing") }.compactMap { line in
                line.split(separator: " ").first { $0.hasPrefix("endpoint=") }
            })
            #expect(endpoints.count == streams.count, "\(endpoints)")
            for stream in streams {
                let ends = log.split(separator: "\n").filter { $0.contains("capture finished") && $0.contains("stream=\(stream) ") }
                #expect(ends.count == 1, "\(stream): \(ends)")
            }
        }

        @Test("several --source: one --stream each, distinct, and a --bind with port *; else a clear error",
              .timeLimit(.minutes(15)))
        func refusesAmbiguousNodes() async throws {
            let cluster = try TestCluster("capture-group-args")
            defer { cluster.cleanup() }
            let folder = cluster.directory.appendingPathComponent("frames")
            _ = try SyntheticFrames.writeFolder(folder, count: 1, width: 64, height: 48)
            let cases: [(arguments: [String], says: String)] = [
                (["--source", folder.path, "--source", folder.path, "--stream", "a"], "one --stream per --source"),
                (["--source", folder.path, "--stream", "a", "--source", folder.path, "--stream", "a"], "must be different"),
                (["--source", folder.path, "--stream", "a", "--source", folder.path, "--stream", "b", "--bind", "tcp://127.0.0.1:5599"],
                 "port *"),
                (["--source", folder.path, "--stream", "a", "--source", folder.path, "--stream", "b", "--bind", "tcp://127.0.0.1:*",
                  "--advertise", "tcp://h:1"],
                 "leave them out"),
                (["--source", folder.path, "--stream", "a", "--source", folder.path, "--stream", "no spaces"], "1-64 characters"),
                (["--source", "-", "--stream", "a", "--source", "-", "--stream", "b", "--bind", "tcp://127.0.0.1:*"], "standard input"),
            ]
            for (index, test) in cases.enumerated() {
                let capture = try cluster.facewire("capture-\(index)", ["--role", "capture"] + test.arguments)
                let status = try await capture.waitForExit()
                #expect(status != 0, "\(test.arguments)")
                #expect(capture.text(.stderr).contains(test.says), "\(test.arguments): \(capture.text(.stderr))")
            }
        }
    }
}
