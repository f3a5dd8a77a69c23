import Foundation
import Testing

extension IntegrationTests {
    /// `local` never leaves its children behind (issue 31): a closed standard output is a quiet stop that ends them,
    /// and a `kill -9` of `local` ends them through their lifeline (FacewireRuntime.ParentLifeline).
    @Suite("--role local: its children end with it")
    struct LocalChildren {
        /// The PIDs of every process whose environment holds `marker` (what `local` and its children inherit).
        static func processes(marked marker: String) -> [Int32] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap(Int32.init).filter { pid in
                guard pid != getpid(), let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
                return data.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == marker }
            }
        }

        /// Waits up to `seconds` for no marked process to be left; returns those still there.
        static func leftOver(_ marker: String, within seconds: Double) -> [Int32] {
            let deadline = Date().addingTimeInterval(seconds)
            var left = processes(marked: marker)
            while !left.isEmpty, Date() < deadline {
                usleep(100_000)
                left = processes(marked: marker)
            }
            return left
        }

        static func describe(_ pids: [Int32]) -> String {
            pids.map { pid in
                let command = (FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data())
                    .split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
                return "\(pid): \(command)"
            }.joined(separator: "\n")
        }

        @Test("`local … | head -3`: three lines, local exits 0 without an error, and no process of it is left",
              .timeLimit(.minutes(5)))
        func closedStandardOutput() async throws {
            let cluster = try TestCluster("local-head")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: 10, width: 320, height: 240)
            let mark = UUID().uuidString
            let marker = "FW_LIFELINE_MARK=\(mark)"
            let stderrFile = cluster.directory.appendingPathComponent("local.stderr").path
            let script = """
                "$0" --role local --source "$1" --loop --fps max --workers 2 --detector synthetic --synthetic-ms 5 \
                2>"$2" | head -3; echo "local-status=${PIPESTATUS[0]}" >&2
                """
            let shell = try cluster.launch("pipeline", executable: "/bin/bash", [
                "-c", script, try Locations.facewireBinary(), frames.path, stderrFile,
            ], environment: ["FW_LIFELINE_MARK": mark])
            let status = try await shell.waitForExit()
            #expect(status == 0)
            let lines = shell.lines(.stdout)
            let parsed = try FrameLine.parseAll(lines)
            #expect(lines.count == 3 && parsed.count == 3, "\(lines)")
            #expect(shell.text(.stderr).contains("local-status=0"), "local's exit status: \(shell.text(.stderr))")
            let localErrors = (try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? ""
            #expect(!localErrors.contains("error") && !localErrors.contains("Broken pipe"), "local's stderr:\n\(localErrors)")
            let left = Self.leftOver(marker, within: 15)
            #expect(left.isEmpty, "processes left after local stopped:\n\(Self.describe(left))")
        }

        @Test("kill -9 of local: its collector, workers and capture node all end within seconds",
              .timeLimit(.minutes(5)))
        func killedLocal() async throws {
            let cluster = try TestCluster("local-kill")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: 10, width: 320, height: 240)
            let mark = UUID().uuidString
            let marker = "FW_LIFELINE_MARK=\(mark)"
            let local = try cluster.facewire("local", [
                "--role", "local", "--source", frames.path, "--loop", "--fps", "20", "--workers", "2",
                "--detector", "synthetic", "--synthetic-ms", "5",
            ], environment: ["FW_LIFELINE_MARK": mark])
            _ = try await local.waitFor(.stdout, "a few frames") { $0.count >= 5 }
            let before = Self.processes(marked: marker)
            #expect(before.count == 5, "local, a collector, 2 workers and a capture node:\n\(Self.describe(before))")
            local.signal(SIGKILL)
            let left = Self.leftOver(marker, within: 15)
            #expect(left.isEmpty, "processes left after kill -9 of local:\n\(Self.describe(left))")
        }
    }
}
