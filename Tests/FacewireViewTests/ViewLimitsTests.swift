import FacewireView
import Testing
import FacewireViewCore

@Suite struct ViewLimitsTests {
    @Test func everyBoundIsPositive() {
        let limits = ViewLimits()
        #expect([limits.maxStreams, limits.framesPerStream, limits.resultsPerStream, limits.endedTracksPerStream,
                  limits.eventsPerStream, limits.maxJPEGBytes, limits.liveTracksPerStream, limits.maxPendingPreviewBytes].allSatisfy { $0 > 0 })
    }
}
