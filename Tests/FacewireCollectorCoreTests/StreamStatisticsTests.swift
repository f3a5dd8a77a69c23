import Testing
@testable import FacewireCollectorCore

@Suite("StreamStatistics")
struct StreamStatisticsTests {
    @Test func oneWindowCountsRatesAndPercentiles() {
        var statistics = StreamStatistics(now: 0)
        for latency in 1...100 { statistics.record(processed: true, reason: "", latencyMilliseconds: Double(latency)) }
        statistics.record(processed: false, reason: "timeout", latencyMilliseconds: nil)
        statistics.record(processed: false, reason: "timeout", latencyMilliseconds: nil)
        statistics.record(processed: false, reason: "decodeFailed: JPEG data ends early", latencyMilliseconds: nil)
        let report = statistics.report(now: 2_000_000_000, late: 4, duplicates: 1)
        #expect(report.frames == 103)
        #expect(report.processed == 100)
        #expect(report.dropped == ["timeout": 2, "decodeFailed": 1])
        #expect(report.fps == 51.5)
        #expect(report.latencyP50 == 51 && report.latencyP99 == 99)
        #expect(report.late == 4 && report.duplicates == 1)
        #expect(report.description == "frames 103, processed 100, dropped 3 (decodeFailed 1, timeout 2), late 4, duplicates 1, fps 51.5, latency p50 51.0 ms p99 99.0 ms")
    }

    @Test func theNextWindowStartsFromZeroAndCountsOnlyNewLateResults() {
        var statistics = StreamStatistics(now: 0)
        statistics.record(processed: true, reason: "", latencyMilliseconds: 10)
        _ = statistics.report(now: 1_000_000_000, late: 4, duplicates: 1)
        let idle = statistics.report(now: 3_000_000_000, late: 6, duplicates: 1)
        #expect(idle.frames == 0 && idle.processed == 0 && idle.dropped.isEmpty)
        #expect(idle.seconds == 2 && idle.fps == 0)
        #expect(idle.latencyP50 == nil)
        #expect(idle.late == 2 && idle.duplicates == 0)
        #expect(!idle.description.contains("latency"))
    }

    @Test func latencySamplesAreBounded() {
        var statistics = StreamStatistics(now: 0)
        for index in 0..<(StreamStatistics.maxSamples * 3) {
            statistics.record(processed: true, reason: "", latencyMilliseconds: Double(index))
        }
        let report = statistics.report(now: 1_000_000_000, late: 0, duplicates: 0)
        #expect(report.processed == StreamStatistics.maxSamples * 3)
        // Only the newest samples are kept: the median is from the last stretch.
        #expect((report.latencyP50 ?? 0) > Double(StreamStatistics.maxSamples * 2))
    }
}
