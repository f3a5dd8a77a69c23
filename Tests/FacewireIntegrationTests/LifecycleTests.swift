import FacewireRuntime
import Foundation
import Logging
import Testing

@testable import facewire

extension IntegrationTests {
    @Suite("One lifecycle: parts of a node in one ServiceGroup")
    struct Lifecycle {
        @Test("a metrics port that cannot be bound stops the node: non-zero exit, a log line naming the part", .timeLimit(.minutes(15)))
        func httpPartFailureStopsTheNode() async throws {
            let cluster = try TestCluster("lifecycle-http")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(5)
            // A listener on the port the second collector wants for its metrics.
            let first = try await cluster.startCollector(
                control: "tcp://127.0.0.1:\(ports[0])", publish: "tcp://127.0.0.1:\(ports[1])",
                ["--metrics-port", String(ports[4]), "--metrics-host", "127.0.0.1"])
            try await first.waitForLine(containing: "metrics serving")
            let second = try cluster.facewire("collector-2", [
                "--role", "collector", "--bind", "tcp://127.0.0.1:\(ports[2])", "--publish", "tcp://127.0.0.1:\(ports[3])",
                "--metrics-port", String(ports[4]), "--metrics-host", "127.0.0.1",
            ])
            let status = try await second.waitForExit()
            #expect(status != 0, "\(second.tail(.stderr))")
            let log = second.text(.stderr)
            #expect(log.contains("metrics server (127.0.0.1:\(ports[4])) failed, stopping the node"), "\(log)")
            // The loop was asked to stop, not failed by itself (it may not have opened its sockets yet).
            #expect(!log.contains("collector failed"), "\(log)")
            #expect(first.isRunning)
        }

        @Test("a node loop that fails stops the HTTP server too: non-zero exit, a log line naming the part", .timeLimit(.minutes(15)))
        func loopFailureStopsTheNode() async throws {
            let cluster = try TestCluster("lifecycle-loop")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(4)
            let control = "tcp://127.0.0.1:\(ports[0])"
            _ = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[1])")
            // The same control endpoint: this collector's loop cannot bind it.
            let second = try cluster.facewire("collector-2", [
                "--role", "collector", "--bind", control, "--publish", "tcp://127.0.0.1:\(ports[2])",
                "--metrics-port", String(ports[3]), "--metrics-host", "127.0.0.1",
            ])
            let status = try await second.waitForExit()
            #expect(status != 0, "\(second.tail(.stderr))")
            #expect(second.text(.stderr).contains("collector failed, stopping the node"), "\(second.tail(.stderr))")
        }

        @Test("SIGINT and SIGTERM shut a node down gracefully: exit 0, its metrics port closed", .timeLimit(.minutes(15)),
              arguments: [SIGINT, SIGTERM])
        func signalsShutDownGracefully(signal: Int32) async throws {
            let cluster = try TestCluster("lifecycle-signal")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(3)
            let collector = try await cluster.startCollector(
                control: "tcp://127.0.0.1:\(ports[0])", publish: "tcp://127.0.0.1:\(ports[1])",
                ["--metrics-port", String(ports[2]), "--metrics-host", "127.0.0.1"])
            try await collector.waitForLine(containing: "metrics serving")
            #expect(try httpGet(port: ports[2], path: "/healthz").status == 200)
            collector.signal(signal)
            #expect(try await collector.waitForExit() == 0, "\(collector.tail(.stderr))")
            #expect(collector.text(.stderr).contains("collector stopped"))
            #expect(throws: (any Error).self) { try httpGet(port: ports[2], path: "/healthz") }
        }

        @Test("ChildProcesses: every unexpected exit is reported once, failure is the first one's status, read from any thread")
        func childProcessesReportExits() async throws {
            let seen = Locked<[String: Int32]>([:])
            let calls = Locked(0)
            let children = ChildProcesses(executable: "/bin/sh", logger: Logger(label: "test")) { name, status in
                seen.update { $0[name] = $0[name] ?? status }
                calls.update { $0 += 1 }
            }
            // Readers race the termination handlers: failure is read under the lock.
            let reader = Thread {
                for _ in 0..<20_000 { _ = children.failure }
            }
            reader.start()
            for index in 0..<16 {
                try children.start("child-\(index)", ["-c", "exit \(index % 3 == 0 ? 0 : 3)"], mayExit: index % 3 == 0)
            }
            for index in 0..<16 { #expect(children.waitForExit("child-\(index)", seconds: 30)) }
            let deadline = ContinuousClock.now + .seconds(30)
            while calls.value < 10, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            // Children 1, 2, 4, 5, ... (10 of 16) fail with 3; those that may exit and exit 0 are not reported.
            #expect(calls.value == 10)
            #expect(Set(seen.value.keys) == Set((0..<16).filter { $0 % 3 != 0 }.map { "child-\($0)" }))
            #expect(seen.value.values.allSatisfy { $0 == 3 })
            #expect(children.failure == 3)
            children.terminateAll()
        }
    }
}
