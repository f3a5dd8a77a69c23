import FacewireRuntime
import Foundation
import Testing
import ZeroMQ

/// CURVE with real processes: `facewire keygen`, a cluster where every socket is CURVE, a worker whose key is not
/// allowed (it gets no frame and the collector takes no result from it), and the same stream as plain TCP.
extension IntegrationTests {
    @Suite("CURVE security")
    struct CurveClusters {
        /// Key pairs for a cluster, made with `facewire keygen`, and the allow-lists: the collector accepts the capture
        /// node, the good worker and the tail; the capture node accepts the good worker.
        static func makeKeys(in directory: URL) throws -> URL {
            let keys = directory.appendingPathComponent("keys")
            let collectorAllow = keys.appendingPathComponent("collector-allow")
            let captureAllow = keys.appendingPathComponent("capture-allow")
            for folder in [collectorAllow, captureAllow] {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            let binary = try Locations.facewireBinary()
            for name in ["collector", "capture", "good", "bad", "tail"] {
                let made = try runCommand(binary, ["keygen", keys.appendingPathComponent(name).path])
                try #require(made.status == 0, "\(made.output)")
            }
            for (name, folder) in [("capture", collectorAllow), ("good", collectorAllow), ("tail", collectorAllow), ("good", captureAllow)] {
                try FileManager.default.copyItem(
                    at: keys.appendingPathComponent("\(name).pub"), to: folder.appendingPathComponent("\(name).pub"))
            }
            return keys
        }

        /// Frames with a face when the demo footage is installed (so the comparison covers faces), else synthetic.
        static func frames(in directory: URL, count: Int) throws -> URL {
            let folder = directory.appendingPathComponent("frames")
            let environment = ProcessInfo.processInfo.environment
            let cache = environment["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0) }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
            let demo = cache.appendingPathComponent("facewire/demo/astronaut")
            if let names = try? FileManager.default.contentsOfDirectory(atPath: demo.path).filter({ $0.hasSuffix(".jpg") }).sorted(),
                names.count >= count
            {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for name in names.prefix(count) {
                    try FileManager.default.copyItem(at: demo.appendingPathComponent(name), to: folder.appendingPathComponent(name))
                }
            } else {
                try SyntheticFrames.writeFolder(folder, count: count, width: 320, height: 240)
            }
            return folder
        }

        /// Runs collector, tail, one worker and a capture node over `frames` (--fps max) and returns the tail's lines
        /// with what differs from run to run (epoch, times, worker ids) taken out. With `keys`, everything is CURVE and a
        /// second worker with a key nobody allows is started too.
        static func run(_ cluster: TestCluster, frames: URL, count: Int, keys: URL?) async throws -> (lines: [String], bad: NodeProcess?) {
            let ports = try freeLoopbackPorts(3)
            let control = "tcp://127.0.0.1:\(ports[0])"
            func key(_ name: String) -> String { keys!.appendingPathComponent(name).path }
            let collectorCurve = keys == nil ? [] : ["--curve-secret-key", key("collector.key"), "--curve-allow", key("collector-allow")]
            func client(_ name: String) -> [String] {
                keys == nil ? [] : ["--curve-secret-key", key("\(name).key"), "--curve-server-key", key("collector.pub")]
            }
            _ = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[1])", collectorCurve)
            let tail = try await cluster.startTail(control: control, ["--stream", "sec", "--exit-on-end"] + client("tail"))
            _ = try await cluster.startWorker("good", control: control, ["--id", "good"] + client("good"))
            var bad: NodeProcess?
            if keys != nil {
                // It knows where the capture node is and its key, but its own key is on no allow-list.
                bad = try await cluster.startWorker(
                    "bad", control: control,
                    ["--id", "bad", "--capture", "tcp://127.0.0.1:\(ports[2])", "--capture-key", key("capture.pub")] + client("bad"))
            }
            let captureCurve = keys == nil ? [] : client("capture") + ["--curve-allow", key("capture-allow")]
            _ = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", "sec", "--bind", "tcp://127.0.0.1:\(ports[2])",
                "--collector", control, "--fps", "max",
            ] + captureCurve)
            #expect(try await tail.waitForExit() == 0, "\(cluster.diagnostics())")
            let lines = try tail.lines(.stdout).map { line -> String in
                var object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                for volatile in ["epoch", "captureTime", "timings", "worker"] { object[volatile] = nil }
                return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
            }
            return (lines, bad)
        }

        @Test("with CURVE a worker without an allowed key gets no frame and sends no result; the stream equals plain TCP's",
              .timeLimit(.minutes(15)))
        func curveClusterMatchesPlainTCP() async throws {
            let count = 20
            let plainCluster = try TestCluster("plain")
            defer { plainCluster.cleanup() }
            let frames = try Self.frames(in: plainCluster.directory, count: count)
            let plain = try await Self.run(plainCluster, frames: frames, count: count, keys: nil)

            let cluster = try TestCluster("curve")
            defer { cluster.cleanup() }
            let keys = try Self.makeKeys(in: cluster.directory)
            let attributes = try FileManager.default.attributesOfItem(atPath: keys.appendingPathComponent("good.key").path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "a secret key file must be private")
            let secured = try await Self.run(cluster, frames: frames, count: count, keys: keys)

            #expect(plain.lines.count == count)
            #expect(secured.lines == plain.lines, "the CURVE stream differs from the plain one")
            let faces = plain.lines.filter { !$0.contains("\"faces\":[]") }.count
            print("[curve] \(count) frames identical with and without CURVE; \(faces) with faces")

            // The refused worker: nothing received, nothing sent; both binding nodes refused its key.
            let bad = try #require(secured.bad)
            bad.signal(SIGTERM)
            _ = try await bad.waitForExit()
            let stopped = try #require(bad.lines(.stderr).first { $0.contains("worker stopped") })
            #expect(!stopped.contains("frames_received") && !stopped.contains("frames_processed"), "\(stopped)")
            let logs = cluster.diagnostics(lines: 400)
            #expect(logs.contains("refused a peer whose key is not allowed"), "the collector did not refuse it")
            #expect(logs.contains("refused a worker whose key is not allowed"), "the capture node did not refuse it")
        }

        @Test("CURVE flags: clear errors for a flag a role does not use, a missing key, or a public key given as secret",
              .timeLimit(.minutes(15)))
        func flagErrors() async throws {
            let cluster = try TestCluster("curve-flags")
            defer { cluster.cleanup() }
            let keys = try Self.makeKeys(in: cluster.directory)
            let binary = try Locations.facewireBinary()
            func path(_ name: String) -> String { keys.appendingPathComponent(name).path }
            // A wrong key file is reported for what is wrong with it, not as "not found".
            let publicKey = try CurveKeyPair(file: path("collector.pub")).publicKey
            try "public-key = \"\(publicKey.dropLast())\"\n".write(toFile: path("short.pub"), atomically: true, encoding: .utf8)
            let cases: [([String], String)] = [
                (["--role", "tail", "--collector", "tcp://127.0.0.1:1", "--curve-secret-key", path("collector-allow"),
                  "--curve-server-key", path("collector.pub")], "--curve-secret-key: \(path("collector-allow")) is a directory"),
                (["--role", "tail", "--collector", "tcp://127.0.0.1:1", "--curve-secret-key", path("tail.key"),
                  "--curve-server-key", path("short.pub")], "public-key is 39 characters long, not 40"),
                (["--role", "tail", "--collector", "tcp://127.0.0.1:1", "--curve-secret-key", path("tail.key"),
                  "--curve-server-key", path("absent.pub")], "key file \(path("absent.pub")) not found"),
                (["--role", "worker", "--collector", "tcp://127.0.0.1:1", "--curve-secret-key", path("good.key"),
                  "--curve-server-key", path("collector.pub"), "--curve-allow", path("good.pub")], "--curve-allow is for nodes that accept"),
                (["--role", "worker", "--collector", "tcp://127.0.0.1:1", "--curve-secret-key", path("good.key")], "--curve-server-key FILE.pub"),
                (["--role", "collector", "--curve-secret-key", path("collector.key")], "--curve-allow FILE.pub"),
                (["--role", "tail", "--collector", "tcp://127.0.0.1:1", "--curve-secret-key", path("tail.pub"),
                  "--curve-server-key", path("collector.pub")], "holds only a public key"),
                (["--role", "tail", "--collector", "tcp://127.0.0.1:1", "--curve-server-key", path("collector.pub")], "need --curve-secret-key"),
            ]
            for (arguments, expected) in cases {
                let result = try runCommand(binary, arguments)
                #expect(result.status != 0, "\(arguments) was accepted")
                #expect(result.output.contains(expected), "\(arguments): \(result.output)")
            }
            let again = try runCommand(binary, ["keygen", path("good")])
            #expect(again.status != 0 && again.output.contains("exists"), "keygen must not overwrite a key: \(again.output)")
        }
    }
}
