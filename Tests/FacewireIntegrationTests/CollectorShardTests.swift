import FacewireRuntime
import FacewireTesting
import Foundation
import Testing

/// Streams spread over two collectors (SPEC.md 19), with real processes: two shards, capture nodes and a worker that
/// route by the owner function, and one tail that follows both.
extension IntegrationTests {
    @Suite("Shards: streams spread over two collectors")
    struct CollectorShards {
        /// Owners among 2 shards (SPEC 19.1; ShardMapTests checks the function against an independent one).
        static let shard0 = ["cam-1", "cam-4"]
        static let shard1 = ["cam-2", "cam-3"]

        @Test(
            "two shards: each stream goes to its owner, one worker serves both, one tail prints every stream whole and in order",
            .timeLimit(.minutes(10)))
        func twoShardsOneTail() async throws {
            let cluster = try TestCluster("shards")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(4)
            let controls = ["tcp://127.0.0.1:\(ports[0])", "tcp://127.0.0.1:\(ports[2])"]
            var collectors: [NodeProcess] = []
            for k in 0..<2 {
                let collector = try cluster.facewire("collector-\(k)", [
                    "--role", "collector", "--bind", controls[k], "--publish", "tcp://127.0.0.1:\(ports[2 * k + 1])", "--shard", "\(k)/2",
                    "--stats-interval", "0",
                ])
                _ = try await collector.waitForLine(containing: "collector listening")
                collectors.append(collector)
            }
            let list = controls.joined(separator: ";")
            let tail = try cluster.facewire("tail", ["--role", "tail", "--collector", list, "--events"])
            _ = try await tail.waitFor(.stderr, "the tail following both shards") { lines in
                lines.filter { $0.contains("following a collector's results") }.count >= 2
            }
            let worker = try await cluster.startWorker(control: list, ["--threads", "4", "--detector", "synthetic", "--synthetic-ms", "5"])
            let folder = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(folder, count: 15, width: 320, height: 240)
            let frames = 15
            let streams = Self.shard0 + Self.shard1
            let capture = try cluster.facewire("capture", [
                "--role", "capture", "--bind", "tcp://127.0.0.1:*", "--collector", list, "--fps", "max", "--frames", String(frames),
            ] + streams.flatMap { ["--source", folder.path, "--stream", $0] })
            // A node that lists the shards in the other order sends cam-5 (shard 0's) to shard 1: that collector still
            // takes the stream whole, counts it and says which shard it is; the node logs the mismatch.
            let misconfigured = try cluster.facewire("capture-reversed", [
                "--role", "capture", "--bind", "tcp://127.0.0.1:*", "--collector", controls.reversed().joined(separator: ";"),
                "--fps", "max", "--frames", String(frames), "--source", folder.path, "--stream", "cam-5",
            ])
            try await tail.waitFor(.stdout, "five streamEnded lines") { lines in
                lines.filter { $0.contains("\"event\":\"streamEnded\"") }.count >= streams.count + 1
            }
            #expect(try await capture.waitForExit() == 0, "\(capture.tail(.stderr))")
            #expect(try await misconfigured.waitForExit() == 0, "\(misconfigured.tail(.stderr))")

            let all = tail.lines(.stdout)
            for stream in streams + ["cam-5"] {
                let lines = try FrameLine.parseAll(all.filter { $0.contains("\"stream\":\"\(stream)\"") })
                let problems = orderProblems(lines, count: frames)
                #expect(problems.isEmpty, "stream \(stream): \(problems)\n\(cluster.diagnostics())")
                #expect(lines.filter { $0.status == "processed" }.count == frames, "stream \(stream)")
            }
            // Each collector announced exactly the streams routed to it.
            func announced(_ k: Int) -> Set<String> {
                Set(collectors[k].lines(.stderr).filter { $0.contains("capture announced") }.compactMap { line in
                    line.split(separator: " ").first { $0.hasPrefix("stream=") }.map { String($0.dropFirst("stream=".count)) }
                })
            }
            #expect(announced(0) == Set(Self.shard0), "\(announced(0))")
            #expect(announced(1) == Set(Self.shard1 + ["cam-5"]), "\(announced(1))")
            #expect(collectors[1].text(.stderr).contains("another shard owns"), "\(collectors[1].tail(.stderr))")
            #expect(!collectors[0].text(.stderr).contains("another shard owns"))
            #expect(misconfigured.text(.stderr).contains("the collector says it is shard 1/2; this node's --collector lists it as 0/2"),
                    "\(misconfigured.tail(.stderr))")
            #expect(!capture.text(.stderr).contains("the collector says it is shard"))
            #expect(worker.text(.stderr).contains("threads per shard"), "\(worker.tail(.stderr))")
        }

        @Test(
            "adding a shard: a capture node restarted with the new list moves its stream to its new owner, both epochs whole",
            .timeLimit(.minutes(10)))
        func addingAShardMovesAStreamWithANewEpoch() async throws {
            let cluster = try TestCluster("reshard")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(4)
            let controls = ["tcp://127.0.0.1:\(ports[0])", "tcp://127.0.0.1:\(ports[2])"]
            // One collector, unsharded, as a cluster starts; the second shard comes later.
            let first = try await cluster.startCollector(control: controls[0], publish: "tcp://127.0.0.1:\(ports[1])", ["--stats-interval", "0"])
            let list = controls.joined(separator: ";")
            let tail = try cluster.facewire("tail", ["--role", "tail", "--collector", list, "--events", "--stream", "cam-2"])
            _ = try await tail.waitForLine(containing: "following a collector's results")
            var worker = try await cluster.startWorker(control: controls[0], ["--threads", "2", "--detector", "synthetic", "--synthetic-ms", "5"])
            let folder = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(folder, count: 10, width: 320, height: 240)
            func capture(_ name: String, _ collectors: String, _ extra: [String]) throws -> NodeProcess {
                try cluster.facewire(name, [
                    "--role", "capture", "--bind", "tcp://127.0.0.1:*", "--collector", collectors, "--source", folder.path,
                    "--stream", "cam-2",
                ] + extra)
            }
            func frames() -> [FrameLine] { (try? FrameLine.parseAll(tail.lines(.stdout))) ?? [] }
            let before = try capture("capture-1", controls[0], ["--loop", "--fps", "20"])
            _ = try await tail.waitFor(.stdout, "20 frames of the first epoch") { _ in frames().count >= 20 }

            // The second shard starts; the worker and then the capture node restart with the new list (SIGTERM: the
            // worker finishes the frames in hand, the capture node ends its epoch with a StreamEnd).
            let second = try cluster.facewire("collector-1", [
                "--role", "collector", "--bind", controls[1], "--publish", "tcp://127.0.0.1:\(ports[3])", "--shard", "1/2",
                "--stats-interval", "0",
            ])
            _ = try await second.waitForLine(containing: "collector listening")
            _ = try await tail.waitFor(.stderr, "the tail following the new shard") { lines in
                lines.filter { $0.contains("following a collector's results") }.count >= 2
            }
            worker.stop()
            worker = try await cluster.startWorker("worker-2", control: list, ["--threads", "2", "--detector", "synthetic", "--synthetic-ms", "5"])
            before.stop()
            let after = try capture("capture-2", list, ["--fps", "max", "--frames", "10"])
            #expect(try await after.waitForExit() == 0, "\(after.tail(.stderr))")
            try await tail.waitFor(.stdout, "both epochs ended") { lines in
                lines.filter { $0.contains("\"event\":\"streamEnded\"") }.count >= 2
            }

            let lines = try FrameLine.parseAll(tail.lines(.stdout))
            let epochs = Array(Set(lines.map(\.epoch))).sorted()
            #expect(epochs.count == 2, "two epochs: \(epochs)\n\(cluster.diagnostics())")
            let old = lines.filter { $0.epoch == epochs.first }
            let new = lines.filter { $0.epoch == epochs.last }
            // Every frame of each epoch accounted, once and in order: the old one up to where its StreamEnd said.
            #expect(old.count >= 20 && orderProblems(old, count: old.count).isEmpty, "\(orderProblems(old, count: old.count))")
            #expect(old.allSatisfy { $0.status == "processed" || $0.reason != nil })
            #expect(orderProblems(new, count: 10).isEmpty, "\(orderProblems(new, count: 10))")
            #expect(new.allSatisfy { $0.status == "processed" }, "\(new.map { "\($0.seq) \($0.status) \($0.reason ?? "")" })")
            // The old epoch was the first collector's, the new one is the second's (cam-2 is shard 1's of 2).
            #expect(first.text(.stderr).contains("stream=cam-2") && second.text(.stderr).contains("stream=cam-2"))
            #expect(!first.text(.stderr).contains("another shard owns") && !second.text(.stderr).contains("another shard owns"))
        }

        @Test(
            "with --election each shard is a group of its own, and one started with another number of shards stands by and says why",
            .enabled(if: EtcdServer.binary != nil, "etcd is not installed (scripts/setup.sh installs etcd-server)"),
            .timeLimit(.minutes(5)))
        func shardsElectTheirOwnActives() async throws {
            let etcd = try EtcdServer()
            defer { etcd.stop() }
            try await etcd.ready()
            let cluster = try TestCluster("shard-election")
            defer { cluster.cleanup() }
            func collector(_ name: String, shard: String) throws -> NodeProcess {
                let ports = try freeLoopbackPorts(3)
                return try cluster.facewire(name, [
                    "--role", "collector", "--bind", "tcp://127.0.0.1:\(ports[0])", "--publish", "tcp://127.0.0.1:\(ports[1])",
                    "--replication-bind", "tcp://127.0.0.1:\(ports[2])", "--advertise-host", "127.0.0.1",
                    "--election", "etcd://" + etcd.base.dropFirst("http://".count), "--election-ttl", "1", "--shard", shard,
                ])
            }
            let zero = try collector("shard-0", shard: "0/2")
            _ = try await zero.waitForLine(containing: "this collector is active")
            let one = try collector("shard-1", shard: "1/2")
            _ = try await one.waitForLine(containing: "this collector is active")
            let wrong = try collector("shard-2-of-3", shard: "2/3")
            _ = try await wrong.waitForLine(containing: "says \"2\" shards; this collector was started as one of 3")
            try await Task.sleep(for: .seconds(2))
            #expect(!wrong.text(.stderr).contains("this collector is active"), "\(wrong.tail(.stderr))")
            #expect(zero.text(.stderr).contains("wrote the group's number of shards to etcd"))
        }
    }
}
