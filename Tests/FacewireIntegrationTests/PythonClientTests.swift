import FacewireProtocol
import FacewireRuntime
import Foundation
import Testing

/// The Python client (clients/python, import name `facewire`) against a real cluster: it prints the same lines as
/// `facewire --role tail` for the same run, byte for byte, over plain TCP and over CURVE.
extension IntegrationTests {
    @Suite("clients/python against a real cluster")
    struct PythonClient {
        static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("clients/python")
        static var hasModules: Bool {
            (try? runCommand("/usr/bin/python3", ["-c", "import zmq, google.protobuf"]).status) == 0
        }

        /// Runs collector, tail, python client, one worker (the default detector, mesh landmarks: every kind of number)
        /// and a capture node over `count` frames; returns the tail's and the client's standard output.
        static func run(_ cluster: TestCluster, count: Int, keys: URL?) async throws -> (tail: String, client: String) {
            let frames = try CurveClusters.frames(in: cluster.directory, count: count)
            let ports = try freeLoopbackPorts(3)
            let control = "tcp://127.0.0.1:\(ports[0])"
            func key(_ name: String) -> String { keys!.appendingPathComponent(name).path }
            func client(_ name: String) -> [String] {
                keys == nil ? [] : ["--curve-secret-key", key("\(name).key"), "--curve-server-key", key("collector.pub")]
            }
            let collectorCurve = keys == nil ? [] : ["--curve-secret-key", key("collector.key"), "--curve-allow", key("collector-allow")]
            _ = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[1])", collectorCurve)
            let tail = try await cluster.startTail(control: control, ["--stream", "py", "--events", "--exit-on-end"] + client("tail"))
            // The client uses the tail's key (the collector's allow-list has it).
            let python = try cluster.launch(
                "python", executable: "/usr/bin/python3",
                ["-m", "facewire", "--collector", control, "--stream", "py", "--events", "--exit-on-end"] + client("tail"),
                environment: ["PYTHONPATH": package.path])
            _ = try await python.waitForLine(containing: "facewire client subscribed")
            // The asyncio iterator, in a program of its own, printing what the CLI prints.
            let asyncProgram = """
                import asyncio, sys, facewire
                async def main():
                    client = facewire.Client(collector=sys.argv[1], streams=["py"], on_subscribed=lambda: print("subscribed", file=sys.stderr, flush=True), \
                        curve_secret_key=sys.argv[2] or None, curve_server_key=sys.argv[3] or None)
                    async for item in client.aiter():
                        if not isinstance(item, facewire.Statistics):
                            print(item.json(), flush=True)
                        if isinstance(item, facewire.StreamEnded):
                            return
                asyncio.run(main())
                """
            let curveFiles = keys == nil ? ["", ""] : [key("tail.key"), key("collector.pub")]
            let asyncClient = try cluster.launch(
                "python-async", executable: "/usr/bin/python3", ["-c", asyncProgram, control] + curveFiles,
                environment: ["PYTHONPATH": package.path])
            _ = try await asyncClient.waitForLine(containing: "subscribed")
            _ = try await cluster.startWorker("good", control: control, ["--id", "good"] + client("good"))
            let captureCurve = keys == nil ? [] : client("capture") + ["--curve-allow", key("capture-allow")]
            _ = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", "py", "--bind", "tcp://127.0.0.1:\(ports[2])",
                "--collector", control, "--fps", "max", "--landmarks", "mesh",
            ] + captureCurve)
            #expect(try await tail.waitForExit() == 0, "\(cluster.diagnostics())")
            #expect(try await python.waitForExit() == 0, "\(python.tail(.stderr))")
            #expect(try await asyncClient.waitForExit() == 0, "\(asyncClient.tail(.stderr))")
            #expect(asyncClient.text(.stdout) == tail.text(.stdout), "the asyncio iterator's lines differ from the tail's")
            return (tail.text(.stdout), python.text(.stdout))
        }

        @Test("pip installs it from the checkout; it imports as `facewire` from elsewhere; its own unit tests pass",
              .enabled(if: hasModules, "needs python3-zmq and python3-protobuf (scripts/setup.sh installs them)"),
              .timeLimit(.minutes(5)))
        func pipInstall() throws {
            let venv = FileManager.default.temporaryDirectory.appendingPathComponent("facewire-client-venv-\(getpid())")
            try? FileManager.default.removeItem(at: venv)
            defer { try? FileManager.default.removeItem(at: venv) }
            // System site packages: Debian's pyzmq and protobuf satisfy the dependencies without a download.
            let made = try runCommand("/usr/bin/python3", ["-m", "venv", "--system-site-packages", venv.path])
            try #require(made.status == 0, "\(made.output)")
            let python = venv.appendingPathComponent("bin/python").path
            let install = try runCommand(python, [
                "-m", "pip", "install", "--quiet", "--no-input", "--no-build-isolation", "--no-index", Self.package.path,
            ])
            #expect(install.status == 0, "\(install.output)")
            let imported = try runCommand("/bin/sh", ["-c", "cd / && \"$0\" -c 'import facewire, sys; print(facewire.__file__); print(facewire.__version__)'", python])
            #expect(imported.status == 0 && imported.output.contains(venv.path) && imported.output.contains("0.3.0"), "\(imported.output)")
            let tests = try runCommand(python, ["-m", "unittest", "discover", "-s", Self.package.appendingPathComponent("tests").path])
            #expect(tests.status == 0 && tests.output.contains("OK"), "\(tests.output)")
        }

        @Test("every results-stream golden vector prints the same line in Python as in Swift; the invalid one prints none",
              .enabled(if: hasModules, "needs python3-zmq and python3-protobuf (scripts/setup.sh installs them)"))
        func goldenVectors() throws {
            let vectors = Self.package.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("protocol/vectors")
            let catalogue = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: vectors.appendingPathComponent("vectors.json"))) as? [String: Any])
            let entries = (catalogue["vectors"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "stream" }
            #expect(entries.count >= 15)
            let program = """
                import sys, facewire
                for name, *files in (line.split() for line in sys.stdin):
                    item = facewire.parse([open(f, "rb").read() for f in files])
                    print(name + "\t" + (item.json() if item else "-"))
                """
            let input = entries.map { entry in
                ([entry["name"] as? String ?? "?"] + (entry["parts"] as? [String] ?? []).map { vectors.appendingPathComponent($0).path })
                    .joined(separator: " ")
            }.joined(separator: "\n")
            let inputFile = FileManager.default.temporaryDirectory.appendingPathComponent("facewire-vectors-\(getpid()).txt")
            try input.write(to: inputFile, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: inputFile) }
            let run = try runCommand("/bin/sh", ["-c", "PYTHONPATH=\"$1\" /usr/bin/python3 -c \"$2\" < \"$3\"", "sh", Self.package.path, program, inputFile.path])
            #expect(run.status == 0, "\(run.output)")
            var python: [String: String] = [:]
            for line in run.output.split(separator: "\n") {
                let fields = line.split(separator: "\t", maxSplits: 1).map(String.init)
                if fields.count == 2 { python[fields[0]] = fields[1] }
            }
            for entry in entries {
                let name = entry["name"] as? String ?? "?"
                let parts = try (entry["parts"] as? [String] ?? []).map { [UInt8](try Data(contentsOf: vectors.appendingPathComponent($0))) }
                let swift = (try? StreamMessage(parts: parts)).flatMap { JSONLines.line(for: $0) } ?? "-"
                #expect(python[name] == swift, "\(name): Python \(python[name] ?? "nothing")\n   Swift \(swift)")
            }
        }

        @Test("plain TCP: the client's JSON Lines are the tail's, byte for byte, events and the stream's end included",
              .enabled(if: hasModules, "needs python3-zmq and python3-protobuf (scripts/setup.sh installs them)"),
              .timeLimit(.minutes(10)))
        func sameLinesAsTail() async throws {
            let cluster = try TestCluster("python-client")
            defer { cluster.cleanup() }
            let (tail, client) = try await Self.run(cluster, count: 20, keys: nil)
            let lines = tail.split(separator: "\n")
            #expect(lines.count >= 21, "20 frames and the end (and events): \(lines.count)")
            #expect(tail.contains("\"streamEnded\""))
            #expect(client == tail, "client:\n\(client.prefix(1500))\n\ntail:\n\(tail.prefix(1500))")
        }

        @Test("CURVE: with the tail's key the client reads the same lines; the collector's allow-list is what admits it",
              .enabled(if: hasModules, "needs python3-zmq and python3-protobuf (scripts/setup.sh installs them)"),
              .timeLimit(.minutes(10)))
        func curve() async throws {
            let cluster = try TestCluster("python-client-curve")
            defer { cluster.cleanup() }
            let keys = try CurveClusters.makeKeys(in: cluster.directory)
            let (tail, client) = try await Self.run(cluster, count: 10, keys: keys)
            #expect(tail.contains("\"streamEnded\""))
            #expect(client == tail, "client:\n\(client.prefix(1500))\n\ntail:\n\(tail.prefix(1500))")
        }
    }
}
