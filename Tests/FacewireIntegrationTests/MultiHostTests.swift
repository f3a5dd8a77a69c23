import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Network namespaces that stand in for hosts: each node namespace has one veth `eth0` (10.77.0.x/24) whose
/// peer sits on a bridge in a "switch" namespace. Nothing connects them to the host's network (no route, no
/// veth end in the root namespace), so no packet leaves them.
struct NamespaceNetwork {
    static let prefix = "fwit-"
    static let ipCandidates = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]

    let ip: String
    let switchName = prefix + "sw"
    /// node name → address
    let hosts: [(name: String, address: String)]

    func namespace(_ host: String) -> String { Self.prefix + host }
    func address(_ host: String) -> String { hosts.first { $0.name == host }!.address }

    /// Why the test cannot run here, or nil when it can.
    /// - Parameter probe: the namespace made and removed to find out (a suite that may run beside another test
    ///   process gives its own name, so that one's probe cannot make the other's fail).
    static func unavailableReason(probe: String = prefix + "probe") -> String? {
        guard geteuid() == 0 else { return "needs root for `ip netns` (running as uid \(geteuid()))" }
        guard let ip = ipCandidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return "the `ip` tool (iproute2) is not installed"
        }
        _ = try? runCommand(ip, ["netns", "del", probe])
        guard let added = try? runCommand(ip, ["netns", "add", probe]), added.status == 0 else {
            return "`ip netns add` fails here (no CAP_SYS_ADMIN or no netns support)"
        }
        defer { _ = try? runCommand(ip, ["netns", "del", probe]) }
        guard let bridge = try? runCommand(ip, ["netns", "exec", probe, ip, "link", "add", "br0", "type", "bridge"]),
            bridge.status == 0
        else { return "cannot create a bridge inside a network namespace: \((try? runCommand(ip, ["netns", "exec", probe, ip, "link", "add", "br0", "type", "bridge"]).output) ?? "")" }
        return nil
    }

    init(hosts: [(String, String)]) throws {
        guard let ip = Self.ipCandidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw HarnessError("no ip tool")
        }
        self.ip = ip
        self.hosts = hosts.map { (name: $0.0, address: $0.1) }
    }

    /// Removes every namespace this suite may have left behind (a previous run that died), killing what runs in it.
    func removeAll() {
        let listed = (try? runCommand(ip, ["netns", "list"]).output) ?? ""
        let names = listed.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
            .filter { $0.hasPrefix(Self.prefix) }
        for name in names {
            let pids = (try? runCommand(ip, ["netns", "pids", name]).output) ?? ""
            for pid in pids.split(whereSeparator: \.isWhitespace).compactMap({ Int32($0) }) where pid > 1 {
                kill(pid, SIGKILL)
            }
            _ = try? runCommand(ip, ["netns", "del", name])
        }
    }

    private func run(_ arguments: [String]) throws {
        let result = try runCommand(ip, arguments)
        guard result.status == 0 else {
            throw HarnessError("`ip \(arguments.joined(separator: " "))` failed (\(result.status)): \(result.output)")
        }
    }

    private func exec(_ namespace: String, _ arguments: [String]) throws {
        try run(["netns", "exec", namespace, ip] + arguments)
    }

    func create() throws {
        try run(["netns", "add", switchName])
        try exec(switchName, ["link", "set", "lo", "up"])
        try exec(switchName, ["link", "add", "br0", "type", "bridge"])
        try exec(switchName, ["link", "set", "br0", "up"])
        for host in hosts {
            let ns = namespace(host.name)
            try run(["netns", "add", ns])
            try exec(ns, ["link", "set", "lo", "up"])
            // Created inside the switch namespace, the node end moved straight into the node namespace:
            // no interface ever appears in the root namespace.
            try exec(switchName, ["link", "add", "p-\(host.name)", "type", "veth", "peer", "name", "eth0", "netns", ns])
            try exec(switchName, ["link", "set", "p-\(host.name)", "master", "br0"])
            try exec(switchName, ["link", "set", "p-\(host.name)", "up"])
            try exec(ns, ["addr", "add", "\(host.address)/24", "dev", "eth0"])
            try exec(ns, ["link", "set", "eth0", "up"])
        }
    }

    /// Takes a host's link on the switch down (a partition: its packets are dropped, its connections stay open) or up.
    func setLink(_ host: String, up: Bool) throws {
        try exec(switchName, ["link", "set", "p-\(host)", up ? "up" : "down"])
    }

    /// `ip netns exec NS facewire ARGUMENTS` as a child of the cluster (ip execs the command: the pid is facewire's).
    func facewire(_ cluster: TestCluster, _ name: String, on host: String, _ arguments: [String]) throws -> NodeProcess {
        try cluster.launch(name, executable: ip, ["netns", "exec", namespace(host), try Locations.facewireBinary()] + arguments)
    }
}

extension IntegrationTests {
    @Suite("Several hosts (network namespaces)")
    struct MultiHost {
        static let skipReason = NamespaceNetwork.unavailableReason()

        @Test(
            "capture, two workers, collector and tail on separate network namespaces",
            .enabled(if: skipReason == nil, "\(skipReason ?? "")"),
            .timeLimit(.minutes(15))
        )
        func clusterAcrossNamespaces() async throws {
            let network = try NamespaceNetwork(hosts: [
                ("capture", "10.77.0.1"), ("worker1", "10.77.0.2"), ("worker2", "10.77.0.3"), ("collector", "10.77.0.4"),
            ])
            network.removeAll()
            let cluster = try TestCluster("netns")
            defer {
                cluster.cleanup()
                network.removeAll()
            }
            try network.create()

            let frameCount = 40
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: frameCount, width: 640, height: 360)
            // Fresh namespaces: every port is free there.
            let controlPort = 7101, publishPort = 7102, capturePort = 7103
            let collectorAddress = network.address("collector")
            let captureAddress = network.address("capture")
            let control = "tcp://\(collectorAddress):\(controlPort)"
            let stream = "netns"

            let collector = try network.facewire(cluster, "collector", on: "collector", [
                "--role", "collector", "--bind", "tcp://*:\(controlPort)", "--publish", "tcp://*:\(publishPort)",
                "--max-delay", "4000",
            ])
            try await collector.waitForLine(containing: "collector listening")
            // The tail lives on the capture host: it must resolve the collector's wildcard publish endpoint to
            // the collector's address by itself.
            let tail = try network.facewire(cluster, "tail", on: "capture", [
                "--role", "tail", "--collector", control, "--stream", stream, "--exit-on-end", "--log-level", "debug",
            ])
            let subscribed = try await tail.waitForLine(containing: "tail subscribed")
            #expect(subscribed.contains("tcp://\(collectorAddress):\(publishPort)"), "tail resolved the publish endpoint: \(subscribed)")
            let worker1 = try network.facewire(cluster, "worker1", on: "worker1", [
                "--role", "worker", "--collector", control, "--threads", "1", "--id", "ns-w1",
            ])
            let worker2 = try network.facewire(cluster, "worker2", on: "worker2", [
                "--role", "worker", "--collector", control, "--threads", "1", "--id", "ns-w2",
            ])
            try await worker1.waitForLine(containing: "worker running")
            try await worker2.waitForLine(containing: "worker running")

            // Bound and announced on the wildcard: the collector must substitute the address it saw the hello from.
            let capture = try network.facewire(cluster, "capture", on: "capture", [
                "--role", "capture", "--source", frames.path, "--stream", stream, "--bind", "tcp://*:\(capturePort)",
                "--collector", control, "--fps", "max",
            ])
            let announced = try await collector.waitForLine(containing: "capture announced")
            // Without the right address no worker can reach the capture: stop here instead of waiting for the tail.
            try #require(announced.contains("endpoint=tcp://\(captureAddress):\(capturePort)"),
                         "the collector must announce the wildcard-bound capture at the address its hello came from: \(announced)")

            let tailStatus = try await tail.waitForExit()
            #expect(tailStatus == 0, "tail must exit 0 at the end of the stream\n\(cluster.diagnostics())")
            let captureStatus = try await capture.waitForExit()
            #expect(captureStatus == 0, "\(cluster.diagnostics())")

            let lines = try FrameLine.parseAll(tail.lines(.stdout))
            let problems = orderProblems(lines, count: frameCount)
            #expect(problems.isEmpty, "stream not complete and ordered: \(problems)\n\(cluster.diagnostics())")
            let notProcessed = lines.filter { $0.status != "processed" }
            #expect(notProcessed.isEmpty, "every frame processed: \(notProcessed.map { "\($0.seq):\($0.status):\($0.reason ?? "")" })")
            let workers = Dictionary(grouping: lines.compactMap(\.worker), by: { $0 }).mapValues(\.count)
            #expect(workers["ns-w1/t0", default: 0] > 0 && workers["ns-w2/t0", default: 0] > 0,
                    "both workers must contribute: \(workers)")
            #expect(Set(workers.keys).isSubset(of: ["ns-w1/t0", "ns-w2/t0"]), "\(workers)")
            for worker in [worker1, worker2] {
                #expect(worker.text(.stderr).contains("endpoint=tcp://\(captureAddress):\(capturePort)"),
                        "\(worker.name) learned the capture's real address")
            }
        }

        /// The worker's host is cut off for 5 s (its link on the switch goes down: packets vanish, no connection is
        /// reset) and comes back. Nothing is restarted: the stream stays ordered and gap-free, the frames of the
        /// outage are declared dropped, and processing resumes by itself once the link is up.
        @Test(
            "a 5 s partition between the worker's host and the others: frames dropped meanwhile, recovery without restarts",
            .enabled(if: skipReason == nil, "\(skipReason ?? "")"),
            .timeLimit(.minutes(15))
        )
        func partitionHeals() async throws {
            let network = try NamespaceNetwork(hosts: [("capture", "10.77.0.1"), ("worker1", "10.77.0.2"), ("collector", "10.77.0.4")])
            network.removeAll()
            let cluster = try TestCluster("partition")
            defer {
                cluster.cleanup()
                network.removeAll()
            }
            try network.create()
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: 50, width: 320, height: 240)
            let control = "tcp://\(network.address("collector")):7101"
            let collector = try network.facewire(cluster, "collector", on: "collector", [
                "--role", "collector", "--bind", "tcp://*:7101", "--publish", "tcp://*:7102", "--max-delay", "1000",
            ])
            try await collector.waitForLine(containing: "collector listening")
            let tail = try network.facewire(cluster, "tail", on: "capture", [
                "--role", "tail", "--collector", control, "--stream", "part", "--log-level", "debug",
            ])
            _ = try await tail.waitForLine(containing: "tail subscribed")
            let worker = try network.facewire(cluster, "worker", on: "worker1", [
                "--role", "worker", "--collector", control, "--threads", "1", "--id", "far",
            ])
            try await worker.waitForLine(containing: "worker running")
            _ = try network.facewire(cluster, "capture", on: "capture", [
                "--role", "capture", "--source", frames.path, "--stream", "part", "--bind", "tcp://*:7103",
                "--collector", control, "--fps", "10", "--loop",
            ])
            _ = try await tail.waitFor(.stdout, "10 processed frames") { lines in
                ((try? FrameLine.parseAll(lines)) ?? []).filter { $0.status == "processed" }.count >= 10
            }
            let workerPID = worker.pid
            try network.setLink("worker1", up: false)
            let cut = try FrameLine.parseAll(tail.lines(.stdout)).map(\.seq).max() ?? 0
            try await Task.sleep(for: .seconds(5))
            try network.setLink("worker1", up: true)
            let healed = ContinuousClock.now
            // Processing resumes: a processed frame captured after the link came back (10 frames/s: 50 after the cut).
            _ = try await tail.waitFor(.stdout, timeout: .seconds(60), "processing after the partition") { lines in
                ((try? FrameLine.parseAll(lines)) ?? []).contains { $0.status == "processed" && $0.seq > cut + 50 }
            }
            let recovery = ContinuousClock.now - healed
            print("[partition] processing resumed \(recovery) after the link came back")
            #expect(worker.isRunning && worker.pid == workerPID, "the worker must not have been restarted")
            let lines = try FrameLine.parseAll(tail.lines(.stdout))
            #expect(orderProblems(lines, count: lines.count).isEmpty, "\(orderProblems(lines, count: lines.count))")
            let outage = lines.filter { $0.seq > cut + 5 && $0.seq <= cut + 45 }
            let dropped = outage.filter { $0.status == "dropped" }
            #expect(!outage.isEmpty && dropped.count >= outage.count / 2, "frames of the outage declared dropped: \(dropped.count) of \(outage.count)")
            #expect(recovery < .seconds(15), "recovery took \(recovery)")
        }
    }
}
