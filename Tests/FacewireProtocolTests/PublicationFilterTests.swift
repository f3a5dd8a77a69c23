import Testing
@testable import FacewireProtocol

@Suite("PublicationFilter")
struct PublicationFilterTests {
    @Test("each numbered message once per (stream, epoch); unnumbered ones always; skipped numbers counted")
    func eachMessageOnce() {
        var filter = PublicationFilter()
        func keep(_ numbers: [UInt64], leader: UInt64 = 7, epoch: UInt64 = 1) -> [Bool] {
            numbers.map { filter.keep(stream: "s", epoch: epoch, publication: $0, leaderEpoch: leader) }
        }
        #expect(keep([1, 2, 3]) == [true, true, true])
        // A collector that took over republishes 2...4 under the old leader's epoch, then goes on under its own.
        #expect(keep([2, 3, 4]) == [false, false, true])
        #expect(keep([5, 6], leader: 9) == [true, true])
        #expect(filter.repeats == 2 && filter.renumbered == 0)
        // The old active, fenced but not yet aware, publishes late: repeats whatever their number.
        #expect(keep([5, 7], leader: 7) == [false, false])
        #expect(keep([1], epoch: 2) == [true], "another epoch is numbered apart")
        #expect(keep([0, 0]) == [true, true])
        #expect(keep([10], leader: 9) == [true] && filter.skipped == 3)
        #expect(keep([.max, .max], leader: 9) == [true, false])
    }

    @Test("a leader that took over without the state numbers afresh: its messages are kept, counted, not taken for repeats")
    func aColdTakeoverIsNotARepeat() {
        var filter = PublicationFilter()
        let old = (1...40).map { filter.keep(stream: "s", epoch: 1, publication: $0, leaderEpoch: 3) }
        let new = [1, 2, 3].map { filter.keep(stream: "s", epoch: 1, publication: $0, leaderEpoch: 5) }
        #expect(old.allSatisfy { $0 } && new == [true, true, true])
        #expect(filter.renumbered == 1 && filter.repeats == 0)
        // Late messages of the dead active after that: repeats (its successor's numbers are now the reference).
        let late = filter.keep(stream: "s", epoch: 1, publication: 41, leaderEpoch: 3)
        #expect(!late)
    }

    @Test("the streams remembered are bounded")
    func bounded() {
        var filter = PublicationFilter(maxStreams: 4)
        for index in 0..<100 { _ = filter.keep(stream: "s\(index)", epoch: 1, publication: 1, leaderEpoch: 1) }
        let repeated = filter.keep(stream: "s99", epoch: 1, publication: 1, leaderEpoch: 1)
        #expect(!repeated, "the latest are remembered")
    }
}
