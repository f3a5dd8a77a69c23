import FacewireRuntime
import Foundation
import Testing

extension IntegrationTests {
    @Suite("Command line: environment variables, help, bad input")
    struct CommandLineInterface {
        @Test("FACEWIRE_FRAMES=5 FACEWIRE_FPS=max --role local prints 5 lines", .timeLimit(.minutes(5)))
        func environmentVariablesBecomeFlags() async throws {
            let cluster = try TestCluster("env")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: 12, width: 320, height: 240)
            let local = try cluster.facewire(
                "local", ["--role", "local", "--source", frames.path],
                environment: ["FACEWIRE_FRAMES": "5", "FACEWIRE_FPS": "max"])
            let status = try await local.waitForExit()
            #expect(status == 0, "\(local.tail(.stderr))")
            let lines = try FrameLine.parseAll(local.lines(.stdout))
            #expect(local.lines(.stdout).count == 5, "FACEWIRE_FRAMES=5 must stop after 5 frames")
            #expect(orderProblems(lines, count: 5).isEmpty, "\(orderProblems(lines, count: 5))")
            // FACEWIRE_FPS=max: the capture waits for workers, so nothing is dropped at the source.
            #expect(lines.allSatisfy { $0.status == "processed" }, "\(lines.map { "\($0.seq):\($0.status):\($0.reason ?? "")" })")
        }

        @Test("the command line wins over the environment", .timeLimit(.minutes(5)))
        func commandLineWinsOverEnvironment() async throws {
            let cluster = try TestCluster("env-override")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: 6, width: 160, height: 120)
            let local = try cluster.facewire(
                "local", ["--role", "local", "--source", frames.path, "--frames", "3"],
                environment: ["FACEWIRE_FRAMES": "5", "FACEWIRE_FPS": "max", "FACEWIRE_STREAM": "from-env"])
            let status = try await local.waitForExit()
            #expect(status == 0, "\(local.tail(.stderr))")
            let lines = try FrameLine.parseAll(local.lines(.stdout))
            #expect(lines.count == 3, "--frames 3 on the command line beats FACEWIRE_FRAMES=5")
            #expect(lines.allSatisfy { $0.stream == "from-env" }, "FACEWIRE_STREAM sets --stream")
        }

        @Test("--role worker --help exits 0 and documents --threads", .timeLimit(.minutes(2)))
        func workerHelp() async throws {
            let cluster = try TestCluster("help")
            defer { cluster.cleanup() }
            let help = try cluster.facewire("help", ["--role", "worker", "--help"])
            let status = try await help.waitForExit()
            #expect(status == 0, "\(help.tail(.stderr))")
            let text = help.text(.stdout) + help.text(.stderr)
            #expect(text.contains("--threads"), "worker help: \(text)")
            #expect(text.contains("--collector"))
        }

        @Test("an unknown role exits non-zero and names the role and the valid ones", .timeLimit(.minutes(2)))
        func unknownRole() async throws {
            let cluster = try TestCluster("role")
            defer { cluster.cleanup() }
            let bad = try cluster.facewire("bad-role", ["--role", "juggler"])
            let status = try await bad.waitForExit()
            #expect(status != 0)
            let text = bad.text(.stderr) + bad.text(.stdout)
            #expect(text.contains("unknown role 'juggler'"), "message: \(text)")
            #expect(text.contains("capture|worker|collector|tail|local"), "message lists the roles: \(text)")
            // The same through FACEWIRE_ROLE.
            let fromEnvironment = try cluster.facewire("bad-role-env", [], environment: ["FACEWIRE_ROLE": "juggler"])
            #expect(try await fromEnvironment.waitForExit() != 0)
            #expect(fromEnvironment.text(.stderr).contains("unknown role 'juggler'"), "\(fromEnvironment.text(.stderr))")
        }

        @Test("a capture node with a non-existent --source exits non-zero with a clear error", .timeLimit(.minutes(2)))
        func captureWithMissingSource() async throws {
            let cluster = try TestCluster("nosource")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(2)
            let missing = cluster.directory.appendingPathComponent("no-such-clip.mp4").path
            let capture = try cluster.facewire("capture", [
                "--role", "capture", "--source", missing, "--stream", "s", "--bind", "tcp://127.0.0.1:\(ports[0])",
                "--collector", "tcp://127.0.0.1:\(ports[1])", "--fps", "max",
            ])
            let status = try await capture.waitForExit()
            #expect(status != 0, "a capture without a source must fail")
            let text = capture.text(.stderr)
            #expect(text.contains(missing) && text.contains("does not exist"), "error message: \(text)")
            #expect(capture.text(.stdout).isEmpty, "nothing on stdout")
        }

        @Test("a worker with a non-existent --model exits non-zero naming the file", .timeLimit(.minutes(2)))
        func workerWithMissingModel() async throws {
            let cluster = try TestCluster("nomodel")
            defer { cluster.cleanup() }
            let port = try freeLoopbackPort()
            let missing = cluster.directory.appendingPathComponent("nothing.onnx").path
            let worker = try cluster.facewire("worker", [
                "--role", "worker", "--collector", "tcp://127.0.0.1:\(port)", "--threads", "1", "--model", missing,
            ])
            let status = try await worker.waitForExit()
            #expect(status != 0)
            #expect(worker.text(.stderr).contains(missing), "\(worker.text(.stderr))")
        }

        @Test("--role local with a non-existent --source exits non-zero with a clear error", .timeLimit(.minutes(2)))
        func localWithMissingSource() async throws {
            let cluster = try TestCluster("local-nosource")
            defer { cluster.cleanup() }
            let missing = cluster.directory.appendingPathComponent("missing-folder").path
            let local = try cluster.facewire("local", ["--role", "local", "--source", missing, "--fps", "max"])
            let status = try await local.waitForExit()
            #expect(status != 0, "local must fail when its capture node cannot open the source")
            #expect(local.text(.stderr).contains(missing) || local.text(.stderr).contains("capture"),
                    "error message: \(local.text(.stderr))")
            #expect(local.lines(.stdout).isEmpty)
        }
    }
}
