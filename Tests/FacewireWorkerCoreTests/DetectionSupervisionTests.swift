import Testing
import FacewireWorkerCore

/// ``DetectionSupervision`` with an injected clock.
@Suite("Detection supervision: a dead thread makes the worker unhealthy until it is back")
struct DetectionSupervisionTests {
    static let second: UInt64 = 1_000_000_000

    @Test("healthy at start; unhealthy while a thread is down; healthy once it restarted")
    func downAndUp() {
        let supervision = DetectionSupervision(threads: 2)
        #expect(supervision.health(at: 0).healthy)
        #expect(supervision.died(1, at: Self.second) == 1)
        let down = supervision.health(at: Self.second)
        #expect(!down.healthy)
        #expect(down.detail.contains("down: 1"))
        supervision.started(1, at: 2 * Self.second)
        #expect(supervision.health(at: 2 * Self.second).healthy)
        #expect(supervision.restarts == 1)
    }

    @Test("more than maxRestarts restarts within the window: unhealthy until they age out; back-off grows to 10 s")
    func restartRate() {
        let supervision = DetectionSupervision(threads: 1, maxRestarts: 3, window: 60 * Self.second)
        var backoffs: [Double] = []
        for i in 0..<12 {
            backoffs.append(supervision.died(0, at: UInt64(i) * Self.second))
            supervision.started(0, at: UInt64(i) * Self.second + 1)
            if i == 2 { #expect(supervision.health(at: UInt64(i) * Self.second + 1).healthy, "3 restarts are tolerated") }
        }
        #expect(backoffs == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10])
        let health = supervision.health(at: 12 * Self.second)
        #expect(!health.healthy)
        #expect(health.detail.contains("restarts"))
        #expect(supervision.health(at: 71 * Self.second).healthy, "the restarts aged out of the window")
        #expect(supervision.restarts == 12)
        #expect(supervision.health(at: 0).healthy, "time going backwards forgets the deaths after it rather than trapping")
    }
}
