import FacewireRuntime
import Testing

@testable import FacewireCaptureCore

/// A ``PreviewGate`` in a box, so that its mutating calls can go inside `#expect`.
final class GateRig {
    var gate: PreviewGate
    let counters: Counters
    init(stream: String, fps: Double, counters: Counters) {
        gate = PreviewGate(stream: stream, fps: fps)
        self.counters = counters
    }
    @discardableResult
    /// Applies a subscription message and counts what its answer names, as the shell does.
    func receive(_ parts: [[UInt8]]) -> PreviewGate.Subscription {
        let subscription = gate.receive(parts)
        if let counter = subscription.counter { counters.add(counter) }
        return subscription
    }
    /// Offers a frame and counts what the answer names; true when it is previewed.
    func offer(atNs ns: UInt64) -> Bool {
        let offer = gate.offer(atNs: ns)
        if let counter = offer.counter { counters.add(counter) }
        return offer == .previewed
    }
    var isWanted: Bool { gate.isWanted }
    var subscriptions: Int { gate.subscriptions }
    var topic: [UInt8] { gate.topic }
}

/// ``PreviewGate`` driven by hand: subscription messages as the XPUB hands them over, and a clock that is a number.
@Suite("PreviewGate: the live-view preview's decisions")
struct PreviewGateTests {
    static let start: UInt64 = 50_000_000_000
    static let ms: UInt64 = 1_000_000

    static func subscribe(_ prefix: String) -> [[UInt8]] { [[1] + Array(prefix.utf8)] }
    static func unsubscribe(_ prefix: String) -> [[UInt8]] { [[0] + Array(prefix.utf8)] }

    /// Offers a frame every `everyMs` for `count` frames from `from`; returns the indices that went.
    static func offered(_ gate: GateRig, count: Int, everyMs: UInt64, from: UInt64 = start) -> [Int] {
        (0..<count).filter { gate.offer(atNs: from + UInt64($0) * everyMs * ms) }
    }

    @Test("without a subscriber nothing is previewed and nothing is counted")
    func noViewer() {
        let counters = Counters()
        let gate = GateRig(stream: "cam1", fps: 10, counters: counters)
        #expect(!gate.isWanted)
        #expect(Self.offered(gate, count: 100, everyMs: 100).isEmpty)
        #expect(counters.names.isEmpty, "\(counters.summary)")
        #expect(gate.topic == Array("cam1".utf8) + [0])
    }

    @Test("the stream's topic, any prefix of it and the empty prefix turn the preview on; unsubscribing turns it off")
    func prefixesOfTheTopic() {
        for prefix in ["cam1\0", "cam1", "cam", "c", ""] {
            let counters = Counters()
            let gate = GateRig(stream: "cam1", fps: 10, counters: counters)
            #expect(gate.receive(Self.subscribe(prefix)) == .changed(length: prefix.utf8.count, subscribed: true))
            #expect(gate.isWanted, "\(prefix.debugDescription)")
            #expect(gate.offer(atNs: Self.start))
            #expect(gate.receive(Self.unsubscribe(prefix)) == .changed(length: prefix.utf8.count, subscribed: false))
            #expect(!gate.isWanted, "\(prefix.debugDescription)")
            #expect(!gate.offer(atNs: Self.start + 1000 * Self.ms))
            #expect(counters.value("preview_subscribed") == 1 && counters.value("preview_unsubscribed") == 1)
        }
    }

    @Test("another stream's topic is ignored, even one this stream's topic is a prefix of (cam1 vs cam10)")
    func otherTopics() {
        let counters = Counters()
        let gate = GateRig(stream: "cam1", fps: 10, counters: counters)
        for prefix in ["cam10\0", "cam10", "cam2", "cam1\0x", "x"] {
            #expect(gate.receive(Self.subscribe(prefix)) == .ignored, "\(prefix.debugDescription)")
        }
        #expect(!gate.isWanted)
        #expect(!gate.offer(atNs: Self.start))
        #expect(counters.value("preview_subscriptions_ignored") == 5)
    }

    @Test("the preview stays on while any subscribed prefix remains; each distinct prefix counts once")
    func severalPrefixes() {
        let gate = GateRig(stream: "cam1", fps: 10, counters: Counters())
        gate.receive(Self.subscribe("cam1\0"))
        gate.receive(Self.subscribe(""))
        gate.receive(Self.subscribe(""))  // a repeat (libzmq passes on only the first; any other is idempotent)
        #expect(gate.subscriptions == 2)
        gate.receive(Self.unsubscribe(""))
        #expect(gate.isWanted, "cam1\\0 is still subscribed")
        gate.receive(Self.unsubscribe("cam1"))  // never subscribed: no effect
        #expect(gate.isWanted && gate.subscriptions == 1)
        gate.receive(Self.unsubscribe("cam1\0"))
        #expect(!gate.isWanted && gate.subscriptions == 0)
        gate.receive(Self.unsubscribe("cam1\0"))
        #expect(gate.subscriptions == 0, "never below zero")
    }

    @Test("absurd messages are refused and counted, and change nothing")
    func absurdMessages() {
        let counters = Counters()
        let gate = GateRig(stream: "cam1", fps: 10, counters: counters)
        gate.receive(Self.subscribe("cam1\0"))
        let absurd: [[[UInt8]]] = [
            [],  // no part
            [[]],  // an empty part
            [[2] + Array("cam1\0".utf8)],  // neither subscribe nor unsubscribe
            [[0xFF]],
            [[0] + Array("cam1\0".utf8), []],  // two parts (an unsubscription and more)
            [Array("hello".utf8), Array("world".utf8)],  // a message from an XSUB peer
            [[0] + Array(repeating: 0x41, count: 66)],  // longer than any topic (65 octets)
            [[0] + Array(repeating: 0, count: 4095)],
            [[1] + Array(repeating: 0x41, count: 1_000_000)],
        ]
        for message in absurd {
            #expect(gate.receive(message) == .refused, "\(message.map(\.count))")
        }
        #expect(counters.value("preview_subscriptions_refused") == UInt64(absurd.count))
        #expect(gate.isWanted && gate.subscriptions == 1, "refused messages must not unsubscribe")
    }

    @Test("the longest stream id: its whole topic (65 octets) is taken, one octet more is refused")
    func longestTopic() {
        let stream = String(repeating: "s", count: 64)
        let counters = Counters()
        let gate = GateRig(stream: stream, fps: 10, counters: counters)
        #expect(gate.receive(Self.subscribe(stream + "\0")) == .changed(length: 65, subscribed: true))
        #expect(gate.receive(Self.subscribe(stream + "\0x")) == .refused)
        #expect(PreviewGate.maxSubscriptionBytes == 66)
    }

    @Test("a flood of distinct subscriptions leaves at most one flag per prefix length of the topic")
    func bounded() {
        let gate = GateRig(stream: "cam1", fps: 10, counters: Counters())
        for n in 0..<10_000 { gate.receive(Self.subscribe("junk\(n)")) }
        for length in 0...5 { gate.receive([[1] + Array("cam1\0".utf8.prefix(length))]) }
        #expect(gate.subscriptions == 6, "every prefix of the 5-octet topic, nothing else")
    }

    @Test("at most --preview-fps: of a 30 fps feed at 10 fps every third frame goes, the rest are counted, nothing is queued")
    func rateLimit() {
        let counters = Counters()
        let gate = GateRig(stream: "cam1", fps: 10, counters: counters)
        gate.receive(Self.subscribe("cam1\0"))
        // 30 fps: frames 33.3 ms apart (integer ms here: 0, 33, 66, 100 ...).
        let sent = (0..<90).filter { gate.offer(atNs: Self.start + UInt64($0) * 100 * Self.ms / 3) }
        #expect(sent == Array(stride(from: 0, to: 90, by: 3)), "\(sent)")
        #expect(counters.value("preview_dropped_rate") == 60)
    }

    @Test("a feed slower than --preview-fps is previewed whole; a frame after a pause goes at once")
    func slowFeed() {
        let gate = GateRig(stream: "cam1", fps: 10, counters: Counters())
        gate.receive(Self.subscribe(""))
        #expect(Self.offered(gate, count: 20, everyMs: 250) == Array(0..<20))
        #expect(gate.offer(atNs: Self.start + 60_000 * Self.ms), "after a minute without frames")
    }

    @Test("newest wins: a burst after a gap sends its first frame, then waits out the period; no frame is sent late")
    func burst() {
        let gate = GateRig(stream: "cam1", fps: 5, counters: Counters())
        gate.receive(Self.subscribe(""))
        #expect(gate.offer(atNs: Self.start))
        // Ten frames 1 ms apart just after: all inside the 200 ms period.
        #expect(Self.offered(gate, count: 10, everyMs: 1, from: Self.start + 1 * Self.ms).isEmpty)
        // The next frame at or after the slot goes, whenever it comes; the ones skipped are never sent.
        #expect(!gate.offer(atNs: Self.start + 150 * Self.ms))
        #expect(gate.offer(atNs: Self.start + 200 * Self.ms))
    }

    @Test("the rate is spent only on frames a view wants: the first frame after a subscription goes at once")
    func rateSpentOnlyWhenWanted() {
        let gate = GateRig(stream: "cam1", fps: 1, counters: Counters())
        #expect(!gate.offer(atNs: Self.start))
        gate.receive(Self.subscribe("cam1\0"))
        #expect(gate.offer(atNs: Self.start + 1 * Self.ms))
        gate.receive(Self.unsubscribe("cam1\0"))
        gate.receive(Self.subscribe("cam1\0"))
        #expect(!gate.offer(atNs: Self.start + 2 * Self.ms), "one per second, across a resubscription")
        #expect(gate.offer(atNs: Self.start + 1001 * Self.ms))
    }
}
