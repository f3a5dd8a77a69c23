import FacewireDetection
import FacewireRuntime
import FacewireWorker
import Foundation
import Logging
import Testing

/// A real ``WorkerNode`` (its sockets, no capture node) whose analyzer factory fails once: the thread is restarted,
/// counted, and `/healthz` is unhealthy while it is down.
@Suite("Detection thread restart")
struct DetectionRestartTests {
    /// The factory's script: thread 1's first build throws, its second waits for the test.
    final class Script: @unchecked Sendable {
        let lock = NSLock()
        var calls: [Int: Int] = [:]
        let release = DispatchSemaphore(value: 0)

        func build(_ thread: Int) throws -> FrameAnalyzer {
            let call = lock.withLock { () -> Int in
                calls[thread, default: 0] += 1
                return calls[thread]!
            }
            if thread == 1, call == 1 { throw DetectionError(.invalidConfiguration, "injected fault") }
            if thread == 1, call == 2 { release.wait() }
            return try FrameAnalyzer(detector: NoFaces())
        }

        func count(_ thread: Int) -> Int { lock.withLock { calls[thread] ?? 0 } }
    }

    /// Polls `condition` every 20 ms for up to 60 s (a generous guard, not a timing assertion).
    func eventually(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<3000 {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    @Test("a thread whose analyzer fails is restarted, counted, and unhealthy until back", .timeLimit(.minutes(15)))
    func restart() async throws {
        let script = Script()
        var configuration = WorkerConfiguration(
            collector: "tcp://127.0.0.1:1", threads: 2, detector: DetectorConfiguration(backend: .cascade), workerID: "restart-test")
        configuration.analyzerFactory = { try script.build($0) }
        let node = WorkerNode(configuration: configuration, logger: Logger(label: "test"))
        let stop = StopToken()
        let finished = DispatchSemaphore(value: 0)
        Thread {
            try? node.run(stop: stop)
            finished.signal()
        }.start()
        defer {
            script.release.signal()
            stop.stop()
            finished.wait()
        }
        #expect(try await eventually { script.count(1) == 2 }, "thread 1 is being rebuilt")
        #expect(node.counters.value("detection_thread_restarts") == 1)
        #expect(try await eventually { !node.liveness.health().healthy }, "unhealthy while thread 1 is down")
        #expect(node.liveness.health().detail.contains("down: 1"), "\(node.liveness.health().detail)")
        script.release.signal()
        #expect(try await eventually { node.liveness.health().healthy }, "healthy once it is back")
        #expect(node.supervision.restarts == 1)
        #expect(script.count(0) == 1, "thread 0 was not touched")
    }
}
