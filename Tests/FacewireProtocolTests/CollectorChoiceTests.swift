import Testing
@testable import FacewireProtocol

/// A client's choice among a failover group's collectors (SPEC.md 18).
@Suite("CollectorChoice")
struct CollectorChoiceTests {
    static let a = "tcp://a:5556"
    static let b = "tcp://b:5556"

    @Test func endpointsAreSplitTrimmedAndOnce() {
        #expect(CollectorChoice.endpoints(" tcp://a:1 ,tcp://b:2,,tcp://a:1 ") == ["tcp://a:1", "tcp://b:2"])
        #expect(CollectorChoice.endpoints("tcp://a:1") == ["tcp://a:1"])
    }

    @Test("the highest epoch's active wins; a fenced one is ignored; a standby points at the active")
    func theHighestActiveWins() {
        var choice = CollectorChoice(endpoints: [Self.a, Self.b])
        #expect(choice.active == 0)
        // a is a standby naming b.
        #expect(choice.welcome(role: .standby, leaderEpoch: 5, activeEndpoint: Self.b, from: 0) == .consume)
        #expect(choice.active == 1 && choice.changes == 1)
        #expect(choice.welcome(role: .active, leaderEpoch: 5, activeEndpoint: "", from: 1) == .deliver)
        // b dies; a takes over with a higher epoch.
        #expect(choice.welcome(role: .active, leaderEpoch: 9, activeEndpoint: "", from: 0) == .deliver)
        #expect(choice.active == 0 && choice.epoch == 9 && choice.changes == 2)
        // b comes back still believing it is active (fenced): ignored.
        #expect(choice.welcome(role: .active, leaderEpoch: 5, activeEndpoint: "", from: 1) == .consume)
        #expect(choice.active == 0)
    }

    @Test("a standby naming an endpoint the client does not know moves it to the next one not known as a standby")
    func anUnknownActiveMovesOn() {
        var choice = CollectorChoice(endpoints: [Self.a, Self.b, "tcp://c:5556"])
        _ = choice.welcome(role: .standby, leaderEpoch: 0, activeEndpoint: "tcp://10.0.0.3:5556", from: 0)
        #expect(choice.active == 1)
        _ = choice.welcome(role: .standby, leaderEpoch: 0, activeEndpoint: "", from: 1)
        #expect(choice.active == 2)
        // Out-of-range indexes change nothing.
        #expect(choice.welcome(role: .active, leaderEpoch: 99, activeEndpoint: "", from: 7) == .consume && choice.active == 2)
    }

    @Test("a single collector (no election) is always delivered")
    func aSingleCollector() {
        var choice = CollectorChoice(endpoints: [Self.a])
        #expect(choice.welcome(role: .single, leaderEpoch: 0, activeEndpoint: "", from: 0) == .deliver)
        #expect(choice.welcome(role: .single, leaderEpoch: 0, activeEndpoint: "", from: 0) == .deliver)
        #expect(choice.changes == 0)
    }
}
