import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The benchmark scripts keep working: each runs its `--smoke` version against the binary under test. The scripts
/// check ordering and accounting themselves and exit non-zero on a problem; these tests add no timing assertion,
/// only that every configuration was run and reported.
extension IntegrationTests {
    @Suite("Benchmark scripts (--smoke)", .serialized)
    struct BenchmarkScripts {
        static let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
        static let netnsSkipReason = python == nil
            ? "python3 is not installed" : NamespaceNetwork.unavailableReason(probe: "fwbs-probe-\(getpid())")

        /// A python3 with pyzmq (bench-preview.py plays the viewer with it).
        static let pythonWithZMQ = ["/usr/bin/python3", "/usr/local/bin/python3"].first {
            FileManager.default.isExecutableFile(atPath: $0) && (try? runCommand($0, ["-c", "import zmq"]).status) == 0
        }

        static func script(_ name: String) -> String {
            Locations.repository.appendingPathComponent("benchmarks/\(name)").path
        }

        @Test(
            "bench-scale.py --smoke: workers on four namespaces, both pacings, two cameras, every stream in order",
            .enabled(if: netnsSkipReason == nil, "\(netnsSkipReason ?? "")"),
            .timeLimit(.minutes(15))
        )
        func scaleOut() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-scale-smoke-\(getpid())")
            defer { try? FileManager.default.removeItem(at: directory) }
            try SyntheticFrames.writeFolder(directory, count: 10, width: 640, height: 480)
            let run = try runCommand(Self.python!, [
                Self.script("bench-scale.py"), "--smoke", "--binary", try Locations.facewireBinary(), "--source", directory.path,
                "--prefix", "fwbs-smoke-",
            ])
            #expect(run.status == 0, "bench-scale.py --smoke failed:\n\(run.output)")
            for row in ["| 1 | --fps max |", "| 2 | --fps max |", "| 1 | live 300 fps |", "| 2 | live 300 fps |", "| 2 × 10 | 2 | 2000 |"] {
                #expect(run.output.contains(row), "row \(row) missing:\n\(run.output)")
            }
            #expect(run.output.contains("every stream in order, gap-free, and adding up"), "\(run.output)")
        }

        @Test(
            "fleet-sim.py --smoke: six cameras on two namespaces into four synthetic threads, one restart, every epoch whole",
            .enabled(if: netnsSkipReason == nil, "\(netnsSkipReason ?? "")"),
            .timeLimit(.minutes(15))
        )
        func fleetSimulation() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-sim-smoke-\(getpid())")
            defer { try? FileManager.default.removeItem(at: directory) }
            try SyntheticFrames.writeFolder(directory, count: 10, width: 320, height: 240)
            let run = try runCommand(Self.python!, [
                Self.script("fleet-sim.py"), "--smoke", "--binary", try Locations.facewireBinary(), "--source", directory.path,
                "--prefix", "fwfs-smoke-",
            ])
            #expect(run.status == 0, "fleet-sim.py --smoke failed:\n\(run.output)")
            #expect(run.output.contains("| smoke | 6 × 5 → 4, one restart |"), "row missing:\n\(run.output)")
            #expect(run.output.contains("every stream in order, gap-free, and adding up"), "\(run.output)")
        }

        @Test(
            "failover-partition.py --smoke: the active collector loses etcd but not its clients; the two never publish at once",
            .enabled(if: netnsSkipReason == nil && FileManager.default.isExecutableFile(atPath: "/usr/bin/etcd"),
                     "\(netnsSkipReason ?? "etcd is not installed (scripts/setup.sh installs etcd-server)")"),
            .timeLimit(.minutes(10))
        )
        func failoverPartition() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("failover-partition-smoke-\(getpid())")
            defer { try? FileManager.default.removeItem(at: directory) }
            try SyntheticFrames.writeFolder(directory, count: 10, width: 320, height: 240)
            let run = try runCommand(Self.python!, [
                Self.script("failover-partition.py"), "--smoke", "--binary", try Locations.facewireBinary(), "--source", directory.path,
                "--prefix", "fwfp-smoke-",
            ])
            #expect(run.status == 0, "failover-partition.py --smoke failed:\n\(run.output)")
            #expect(run.output.contains("\"round\": 1"), "\(run.output)")
            #expect(run.output.contains("no moment where both collectors published"), "\(run.output)")
        }

        @Test(
            "stress-endings.py --smoke: a capture node SIGKILLed and restarted 12 times beside a busy loop, every epoch whole",
            .enabled(if: python != nil, "python3 is not installed"),
            .timeLimit(.minutes(15))
        )
        func epochSwitchesUnderLoad() throws {
            let run = try runCommand(Self.python!, [
                Self.script("stress-endings.py"), "--smoke", "--bounded", "0", "--restarts", "12", "--binary", try Locations.facewireBinary(),
                "--source", try Self.demoFolder(),
            ])
            #expect(run.status == 0, "stress-endings.py --smoke failed:\n\(run.output)")
            #expect(run.output.contains("'epochs with problems': 0"), "\(run.output)")
            #expect(run.output.contains("'results refused as late': 'none'"), "\(run.output)")
        }

        /// A folder of 10 generated frames for scripts that want a folder source.
        static func demoFolder() throws -> String {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stress-endings-frames-\(getpid())")
            if !FileManager.default.fileExists(atPath: directory.path) {
                try SyntheticFrames.writeFolder(directory, count: 10, width: 320, height: 240)
            }
            return directory.path
        }

        @Test(
            "dispatch-sim.py: the dispatch model runs every protocol and reports each",
            .enabled(if: python != nil, "python3 is not installed"),
            .timeLimit(.minutes(15))
        )
        func dispatchModel() throws {
            let run = try runCommand(Self.python!, [Self.script("dispatch-sim.py"), "--seconds", "3", "--cameras", "20", "--threads", "8"])
            #expect(run.status == 0, "\(run.output)")
            for row in ["| credits |", "| rotate |", "| broker |"] {
                #expect(run.output.contains(row), "row \(row) missing:\n\(run.output)")
            }
        }

        @Test(
            "bench-collector.py --smoke: 1 and 10 streams through a real collector and tail, in order and tracked",
            .enabled(if: python != nil, "python3 is not installed"),
            .timeLimit(.minutes(15))
        )
        func collectorCapacity() throws {
            let run = try runCommand(Self.python!, [Self.script("bench-collector.py"), "--smoke", "--binary", try Locations.facewireBinary()])
            #expect(run.status == 0, "bench-collector.py --smoke failed:\n\(run.output)")
            for row in ["| 1 |", "| 10 |"] {
                #expect(run.output.contains(row), "row \(row) missing:\n\(run.output)")
            }
            #expect(run.output.contains("raw libzmq"), "\(run.output)")
            #expect(run.output.contains("every stream in order, processed and tracked"), "\(run.output)")
        }

        @Test(
            "bench-shards.py --smoke: one collector, then two shards, the same load; every stream at its owner and in order in one tail",
            .enabled(if: python != nil, "python3 is not installed"),
            .timeLimit(.minutes(15))
        )
        func shards() throws {
            let run = try runCommand(Self.python!, [Self.script("bench-shards.py"), "--smoke", "--binary", try Locations.facewireBinary()])
            #expect(run.status == 0, "bench-shards.py --smoke failed:\n\(run.output)")
            for row in ["| 1 |", "| 2 shards |"] {
                #expect(run.output.contains(row), "row \(row) missing:\n\(run.output)")
            }
            #expect(run.output.contains("every stream complete at its owner, and printed in order and tracked by the one tail"), "\(run.output)")
        }

        @Test(
            "bench-preview.py --smoke: a capture node with no preview, with no viewer and with one viewer, every preview accounted for",
            .enabled(if: pythonWithZMQ != nil, "no python3 with pyzmq"),
            .timeLimit(.minutes(15))
        )
        func previewCost() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-preview-smoke-\(getpid())")
            defer { try? FileManager.default.removeItem(at: directory) }
            try SyntheticFrames.writeFolder(directory, count: 10, width: 320, height: 240)
            let run = try runCommand(Self.pythonWithZMQ!, [
                Self.script("bench-preview.py"), "--smoke", "--binary", try Locations.facewireBinary(), "--source", directory.path,
            ])
            #expect(run.status == 0, "bench-preview.py --smoke failed:\n\(run.output)")
            for row in ["| off |", "| no viewer |", "| one viewer |"] {
                #expect(run.output.contains(row), "row \(row) missing:\n\(run.output)")
            }
            #expect(run.output.contains("no preview traffic without a viewer; the viewer received the previewed messages in order"), "\(run.output)")
        }
    }
}
