import Testing
@testable import FacewireProtocol

@Suite("PublicationFilter")
struct PublicationFilterTests {
    @Test("each numbered message once per (stream, epoch); unnumbered ones always; skipped numbers counted")
    func eachMessageOnce() {
        var filter = PublicationFilter()
        #expect([1, 2, 3].map { filter.keep(stream: "s", epoch: 1, publication: $0) } == [true, true, true])
        // A collector that took over publishes 2...4 again, then goes on.
        #expect([2, 3, 4, 5].map { filter.keep(stream: "s", epoch: 1, publication: $0) } == [false, false, true, true])
        #expect(filter.repeats == 2)
        let otherEpoch = filter.keep(stream: "s", epoch: 2, publication: 1)
        #expect(otherEpoch, "another epoch is numbered apart")
        let unnumbered = [0, 0].map { filter.keep(stream: "s", epoch: 1, publication: $0) }
        #expect(unnumbered == [true, true])
        let ahead = filter.keep(stream: "s", epoch: 1, publication: 9)
        #expect(ahead && filter.skipped == 3)
        let last = [UInt64.max, .max].map { filter.keep(stream: "s", epoch: 1, publication: $0) }
        #expect(last == [true, false])
    }

    @Test("the streams remembered are bounded")
    func bounded() {
        var filter = PublicationFilter(maxStreams: 4)
        for index in 0..<100 { _ = filter.keep(stream: "s\(index)", epoch: 1, publication: 1) }
        let repeated = filter.keep(stream: "s99", epoch: 1, publication: 1)
        #expect(!repeated, "the latest are remembered")
    }
}
