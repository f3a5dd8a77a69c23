import FacewireProtocol
import FacewireRuntime
import Testing

@testable import FacewireCollectorCore

/// The broker driven by hand: threads and nodes by name, a fake clock, every answer kept.
private struct BrokerRig {
    var broker: DispatchBroker
    var nowNs: UInt64 = 1_000_000_000
    let counters = Counters()
    /// Assignments so far as `node←thread`, in order.
    var assigned: [String] = []
    var logs: [String] = []
    /// Per node, the highest assignment number it received (what its requests say it saw).
    var seen: [String: UInt64] = [:]
    /// Every assignment sent, with its node.
    var sent: [(node: String, assignment: Assignment)] = []

    init(_ configure: (inout DispatchBroker.Settings) -> Void = { _ in }) {
        var settings = DispatchBroker.Settings()
        configure(&settings)
        broker = DispatchBroker(settings: settings)
    }

    private mutating func take(_ out: CollectorOutput) {
        counters.add(out.counts)
        logs += out.logs.map(\.message)
        for reply in out.replies {
            guard case .assignment(let assignment) = reply.envelope.body else { continue }
            let node = String(decoding: reply.identities[0], as: UTF8.self)
            seen[node] = max(seen[node, default: 0], assignment.number)
            assigned.append("\(node)←\(assignment.worker)")
            sent.append((node, assignment))
        }
    }

    mutating func idle(_ thread: String, frames: UInt64 = 0) {
        var out = CollectorOutput()
        var idle = Idle()
        idle.worker = thread
        idle.framesReceived = frames
        broker.idle(idle, from: Array(thread.utf8), at: nowNs, into: &out)
        take(out)
    }

    mutating func result(_ thread: String, stream: String? = nil) {
        var out = CollectorOutput()
        let node = assigned.last { $0.hasSuffix("←\(thread)") }.map { String($0.split(separator: "←")[0]) } ?? ""
        broker.result(for: stream ?? node, from: Array(thread.utf8), at: nowNs, into: &out)
        take(out)
    }

    mutating func request(
        _ node: String, wanted: UInt32 = 1, returned: [String] = [], unreachable: [String] = [], weight: Float = 0,
        seen override: UInt64? = nil, stream: String? = nil
    ) {
        var request = DispatchRequest()
        request.stream = stream ?? node
        request.epoch = 1
        request.wanted = wanted
        request.assignmentsSeen = override ?? seen[node, default: 0]
        request.returned = returned
        request.unreachable = unreachable
        request.weight = weight
        var out = CollectorOutput()
        broker.request(request, from: Array(node.utf8), at: nowNs, into: &out)
        take(out)
    }

    /// The shell could not deliver `assignment` to `node` (its connection is gone).
    mutating func undeliverable(_ assignment: Assignment, to node: String) {
        var out = CollectorOutput()
        broker.assignmentUndeliverable(assignment, to: Array(node.utf8), at: nowNs, into: &out)
        take(out)
    }

    mutating func tick() {
        var out = CollectorOutput()
        broker.tick(at: nowNs, into: &out)
        take(out)
    }

    mutating func advance(ms: UInt64) { nowNs += ms * 1_000_000 }
}

@Suite("DispatchBroker: pairing and fair shares")
struct DispatchBrokerPairingTests {
    @Test("an Assignment that cannot reach its node frees its thread at once for another node; the node is forgotten")
    func undeliverable() {
        var rig = BrokerRig()
        rig.idle("t1")
        rig.idle("t2")
        rig.request("dead", wanted: 2)
        rig.request("live")
        #expect(rig.assigned == ["dead←t1", "dead←t2"])
        // t2's assignment could not be sent (the node was killed): t2 never got it and goes to the live node at once.
        let toT2 = rig.sent[1].assignment
        rig.undeliverable(toT2, to: "dead")
        #expect(rig.assigned.last == "live←t2")
        #expect(rig.counters.value("dispatch_nodes_unreachable") == 1)
        #expect(rig.counters.value("dispatch_assignments_undeliverable") == 1)
        // t1's assignment went out before: it may hold the dead node's frame, so it stays assigned until it answers.
        rig.undeliverable(rig.sent[0].assignment, to: "dead")
        #expect(rig.counters.value("dispatch_assignments_undeliverable") == 1, "the node is forgotten already: no-op")
        rig.request("live", wanted: 1)
        #expect(rig.assigned.count == 3, "t1 is not idle")
        rig.result("t1", stream: "dead")
        rig.idle("t1", frames: 1)
        #expect(rig.assigned.last == "live←t1")
        #expect(rig.counters.value("dispatch_strikes") == 0)
    }

    @Test("an undeliverable Assignment that does not match the thread's releases nothing")
    func undeliverableMismatch() {
        var rig = BrokerRig()
        rig.idle("t1")
        rig.request("n")
        var stale = rig.sent[0].assignment
        stale.number = 7
        rig.undeliverable(stale, to: "n")
        #expect(rig.counters.value("dispatch_nodes_unreachable") == 1)
        #expect(rig.counters.value("dispatch_assignments_undeliverable") == 0)
        rig.request("m")
        #expect(rig.assigned == ["n←t1"], "t1 is still assigned: not given to m")
    }

    @Test("an idle thread goes to a node that wants one; each thread holds one assignment; numbers count per node")
    func pairs() {
        var rig = BrokerRig()
        rig.request("cam-a")
        #expect(rig.assigned.isEmpty)
        rig.idle("t1")
        rig.idle("t2")
        #expect(rig.assigned == ["cam-a←t1"])
        // A repeated request that has not seen the assignment yet wants nothing more (it is on its way).
        rig.request("cam-a", seen: 0)
        #expect(rig.assigned == ["cam-a←t1"])
        // Seen, and wanting one more: t2 goes.
        rig.request("cam-a")
        #expect(rig.assigned == ["cam-a←t1", "cam-a←t2"])
        #expect(rig.seen["cam-a"] == 2)
        // t1 answers and is idle again: no one wants it.
        rig.result("t1")
        rig.idle("t1", frames: 1)
        #expect(rig.broker.figures.idle == 1)
        #expect(rig.broker.figures.assigned == 1)
    }

    @Test("threads go to the demanding node with the least virtual time: equal shares under overload, whoever asks more")
    func equalShares() {
        var rig = BrokerRig()
        let nodes = ["cam-a", "cam-b", "cam-c"]
        var frames: [String: UInt64] = [:]
        for node in nodes { rig.request(node, wanted: node == "cam-a" ? 64 : 1) }
        rig.idle("t")
        for _ in 0..<300 {
            // The thread answers its frame and is idle again; every node still wants one (cam-a wants 64 at once).
            guard let last = rig.assigned.last else { break }
            let node = String(last.split(separator: "←")[0])
            rig.result("t")
            frames["t", default: 0] += 1
            rig.request(node, wanted: node == "cam-a" ? 64 : 1)
            rig.idle("t", frames: frames["t"]!)
        }
        let shares = nodes.map { node in rig.assigned.filter { $0.hasPrefix(node) }.count }
        #expect(shares.max()! - shares.min()! <= 1, "\(shares)")
    }

    @Test("a stream's weight sets its share: weight 2 gets twice the frames of weight 1")
    func weights() {
        var rig = BrokerRig()
        rig.request("heavy", weight: 2)
        rig.request("light")
        rig.idle("t")
        var frames: UInt64 = 0
        for _ in 0..<300 {
            let node = String(rig.assigned.last!.split(separator: "←")[0])
            rig.result("t")
            frames += 1
            rig.request(node, weight: node == "heavy" ? 2 : 0)
            rig.idle("t", frames: frames)
        }
        let heavy = rig.assigned.filter { $0.hasPrefix("heavy") }.count
        let light = rig.assigned.filter { $0.hasPrefix("light") }.count
        #expect(abs(heavy - 2 * light) <= 2, "heavy \(heavy), light \(light)")
    }

    @Test("a node that joins late starts at the current virtual time: it does not take every thread to catch up")
    func lateJoiner() {
        var rig = BrokerRig()
        rig.request("old")
        rig.idle("t")
        var frames: UInt64 = 0
        func cycle(_ rig: inout BrokerRig) {
            let node = String(rig.assigned.last!.split(separator: "←")[0])
            rig.result("t")
            frames += 1
            rig.request(node)
            rig.idle("t", frames: frames)
        }
        for _ in 0..<100 { cycle(&rig) }
        rig.request("new")
        let before = rig.assigned.count
        for _ in 0..<20 { cycle(&rig) }
        let recent = rig.assigned[before...]
        #expect(recent.filter { $0.hasPrefix("old") }.count >= 9, "\(Array(recent))")
    }

    @Test("handed back: a returned thread is pooled again, but not for the same node at once; an unreachable one for longer")
    func handedBack() {
        var rig = BrokerRig()
        rig.request("cam-a")
        rig.idle("t1")
        #expect(rig.assigned == ["cam-a←t1"])
        rig.request("cam-a", returned: ["t1"])
        #expect(rig.counters.value("dispatch_assignments_returned") == 1)
        #expect(rig.assigned.count == 1, "a node that hands back while it wants one must not ping-pong")
        rig.advance(ms: 200)
        rig.tick()
        #expect(rig.assigned == ["cam-a←t1", "cam-a←t1"])
        rig.request("cam-a", unreachable: ["t1"])
        #expect(rig.counters.value("dispatch_assignments_unreachable") == 1)
        rig.advance(ms: 1000)
        rig.tick()
        #expect(rig.assigned.count == 2, "not to the node that cannot reach it, for 2 s")
        rig.request("cam-b")
        #expect(rig.assigned.last == "cam-b←t1", "but to another node")
        rig.idle("t2")
        #expect(rig.assigned.last == "cam-a←t2")
    }

    @Test("a lost assignment stops counting against the node's demand once its thread is released")
    func lostAssignment() {
        var rig = BrokerRig()
        rig.idle("t1")
        rig.idle("t2")
        rig.request("cam", seen: 0)
        #expect(rig.assigned == ["cam←t1"])
        // The assignment never reaches the node: its requests keep saying seen 0, and it is not given a second thread.
        rig.request("cam", seen: 0)
        #expect(rig.assigned.count == 1)
        // t1 says Idle 1 s later without the frame: released, and the node's demand counts again.
        rig.advance(ms: 1000)
        rig.idle("t1")
        #expect(rig.counters.value("dispatch_assignments_undelivered") == 1)
        #expect(rig.assigned.count == 2)
    }
}

@Suite("DispatchBroker: outliers")
struct DispatchBrokerOutlierTests {
    @Test("a black hole (Idle after its frame, no result) is ejected after 2 frames, probed after the backoff, ejected again for twice as long")
    func blackHole() {
        var rig = BrokerRig()
        var frames: UInt64 = 0
        rig.idle("hole")
        for _ in 0..<2 {
            rig.request("cam")
            frames += 1  // it received the frame ...
            rig.idle("hole", frames: frames)  // ... and says Idle without a result
        }
        #expect(rig.assigned.count == 2)
        #expect(rig.counters.value("dispatch_threads_ejected") == 1)
        #expect(rig.broker.ejectedNames() == ["hole"])
        #expect(rig.logs.contains { $0.contains("ejected") })
        // Ejected: its Idles put it nowhere during the backoff.
        rig.request("cam")
        rig.idle("hole", frames: frames)
        #expect(rig.assigned.count == 2)
        // After the 1 s backoff, one probe frame; no result: ejected again at once, for 2 s.
        rig.advance(ms: 1000)
        rig.idle("hole", frames: frames)
        #expect(rig.assigned.count == 3)
        frames += 1
        rig.idle("hole", frames: frames)
        #expect(rig.counters.value("dispatch_threads_ejected") == 2)
        rig.advance(ms: 1500)
        rig.idle("hole", frames: frames)
        #expect(rig.assigned.count == 3, "the second backoff is 2 s")
        rig.advance(ms: 500)
        rig.idle("hole", frames: frames)
        #expect(rig.assigned.count == 4)
        // This time it answers: readmitted, and its next ejection would start at 1 s again.
        rig.result("hole")
        #expect(rig.counters.value("dispatch_threads_readmitted") == 1)
        #expect(rig.broker.ejectedNames().isEmpty)
    }

    @Test("backoffs double up to 30 s and no further: a thread that recovers is readmitted within 30 s")
    func backoffCap() {
        var rig = BrokerRig()
        var frames: UInt64 = 0
        var backoffs: [UInt64] = []
        rig.idle("hole")
        rig.request("cam", wanted: 64)
        for _ in 0..<40 {
            frames += 1
            rig.idle("hole", frames: frames)
            if rig.broker.figures.ejected == 1 {
                let before = rig.assigned.count
                var waited: UInt64 = 0
                while rig.assigned.count == before, waited < 60_000 {
                    rig.advance(ms: 250)
                    waited += 250
                    rig.idle("hole", frames: frames)
                }
                backoffs.append(waited)
            }
        }
        #expect(backoffs.prefix(6) == [1000, 2000, 4000, 8000, 16000, 30000], "\(backoffs)")
        #expect(backoffs.allSatisfy { $0 <= 30_000 })
    }

    @Test("an assigned thread silent past the timeout gets a strike and waits for its next Idle; an undelivered one is released")
    func silentAndUndelivered() {
        var rig = BrokerRig { $0.assignmentTimeoutNs = 5_000_000_000 }
        rig.idle("t")
        rig.request("cam")
        #expect(rig.assigned.count == 1)
        // An Idle from before the frame arrived (same frame count) within 1 s: still assigned.
        rig.advance(ms: 500)
        rig.idle("t")
        #expect(rig.broker.figures.assigned == 1)
        // The same 1 s after the assignment: the frame never came (node gone, assignment lost): released, no strike.
        rig.advance(ms: 500)
        rig.idle("t")
        #expect(rig.counters.value("dispatch_assignments_undelivered") == 1)
        #expect(rig.counters.value("dispatch_strikes") == 0)
        #expect(rig.assigned.count == 2, "and assigned again: the node still wants one")
        // Now silent: at the timeout, a strike; not pooled until it speaks.
        rig.advance(ms: 5000)
        rig.tick()
        #expect(rig.counters.value("dispatch_assignment_timeouts") == 1)
        #expect(rig.counters.value("dispatch_strikes") == 1)
        #expect(rig.broker.figures.assigned == 0)
        #expect(rig.broker.figures.idle == 0)
        rig.request("cam")  // (the node's demand lapsed in the 5 s it said nothing)
        rig.idle("t")
        #expect(rig.assigned.count == 3)
    }

    @Test("frames a node pushes unasked: their results do not answer the assignment, and they earn no strike")
    func unaskedFrames() {
        var rig = BrokerRig()
        rig.idle("t")
        rig.request("cam")
        #expect(rig.assigned == ["cam←t"])
        // Another node pushes two frames; the thread answers them and says Idle: still assigned to cam, no strike.
        rig.result("t", stream: "pushy")
        rig.result("t", stream: "pushy")
        rig.idle("t", frames: 2)
        #expect(rig.counters.value("dispatch_results_unassigned") == 2)
        #expect(rig.counters.value("dispatch_strikes") == 0)
        #expect(rig.broker.figures.assigned == 1)
        // cam's frame comes and is answered.
        rig.result("t")
        rig.idle("t", frames: 3)
        #expect(rig.counters.value("dispatch_assignments_answered") == 1)
        #expect(rig.counters.value("dispatch_strikes") == 0)
    }

    @Test("a frame pushed unasked and answered just before an assignment, its Idle just after: no strike")
    func unaskedFrameAcrossAssignment() {
        var rig = BrokerRig()
        rig.idle("t")
        // The thread takes a pushed frame while idle in line and answers it; the assignment is made before its Idle.
        rig.result("t", stream: "pushy")
        rig.request("cam")
        #expect(rig.assigned == ["cam←t"])
        rig.idle("t", frames: 1)
        // Two more pushed frames while assigned, each answered then followed by its Idle: never a strike, still
        // assigned to cam.
        for frames in UInt64(2)...3 {
            rig.result("t", stream: "pushy")
            rig.idle("t", frames: frames)
        }
        #expect(rig.counters.value("dispatch_strikes") == 0)
        #expect(rig.counters.value("dispatch_idle_without_result") == 0)
        #expect(rig.broker.figures.assigned == 1)
        // A frame it takes and does not answer is still seen: the count less its results grew.
        rig.idle("t", frames: 4)
        #expect(rig.counters.value("dispatch_idle_without_result") == 1)
        #expect(rig.counters.value("dispatch_strikes") == 1)
    }

    @Test("a thread's count below its results (a hostile count, or results from before it joined) never traps nor strikes")
    func countBelowResults() {
        var rig = BrokerRig()
        rig.idle("t", frames: .max)
        rig.request("cam")
        for _ in 0..<3 { rig.result("t", stream: "pushy") }
        rig.idle("t", frames: 0)
        rig.idle("t", frames: 1)
        #expect(rig.counters.value("dispatch_strikes") == 0)
        #expect(rig.broker.figures.assigned == 1)
    }

    @Test("a result clears the strikes: one lost frame now and then never ejects a thread")
    func strikesReset() {
        var rig = BrokerRig()
        var frames: UInt64 = 0
        rig.idle("t")
        for round in 0..<20 {
            rig.request("cam")
            frames += 1
            if round % 2 == 0 { rig.result("t") }
            rig.idle("t", frames: frames)
        }
        #expect(rig.counters.value("dispatch_strikes") == 10)
        #expect(rig.counters.value("dispatch_threads_ejected") == 0)
    }
}

@Suite("DispatchBroker: hostile values and expiry")
struct DispatchBrokerBoundsTests {
    @Test("absurd requests are bounded: wanted, seen, weight, lists, names, stream ids; each counted")
    func hostileRequests() {
        var rig = BrokerRig()
        for index in 0..<100 { rig.idle("t\(index)") }
        rig.request("cam", wanted: .max)
        #expect(rig.assigned.count == 64)
        #expect(rig.counters.value("dispatch_requests_wanted_clamped") == 1)
        rig.request("cam", wanted: 64, seen: .max)
        #expect(rig.counters.value("dispatch_requests_seen_ahead") == 1)
        #expect(rig.assigned.count == 100, "seen is clamped to what was sent: 36 more go")
        rig.request("cam", returned: (0..<10_000).map { "t\($0)" }, unreachable: (0..<10_000).map { "x\($0)" })
        #expect(rig.counters.value("dispatch_requests_list_truncated") == 1)
        #expect(rig.counters.value("dispatch_assignments_returned") == 16)
        for weight in [Float.nan, .infinity, -1, 1e30, 1e-30] {
            #expect((1.0 / 64...64).contains(DispatchBroker.weight(weight)))
        }
        rig.request("bad stream", stream: "a b")
        #expect(rig.counters.value("dispatch_requests_rejected_stream") == 1)
        rig.idle(String(repeating: "n", count: 257))
        rig.idle("")
        #expect(rig.counters.value("dispatch_idle_rejected_worker") == 2)
    }

    @Test("a thread renaming itself while assigned leaves no stale assignment behind: its node's demand counts again")
    func renameWhileAssigned() {
        var rig = BrokerRig()
        rig.idle("t")
        rig.idle("u")
        for round in 0..<50 {
            rig.request("cam", seen: 0)
            rig.idle("t", frames: 0)  // renamed below while assigned
            var idle = Idle()
            idle.worker = "t-renamed-\(round)"
            var out = CollectorOutput()
            rig.broker.idle(idle, from: Array("t".utf8), at: rig.nowNs, into: &out)
            rig.advance(ms: 1000)  // undelivered: released by the name it was assigned by
            rig.idle("t")
        }
        #expect(rig.broker.nodes.values.allSatisfy { $0.assigned.count <= 2 }, "\(rig.broker.nodes.values.map(\.assigned.count))")
    }

    @Test("the idle line stays bounded while a thread no node takes sits at its head")
    func lineBounded() {
        var rig = BrokerRig()
        rig.idle("stuck")
        rig.request("cam", wanted: 0)
        rig.request("cam", unreachable: ["stuck"])  // never for cam; cam wants one
        var frames: UInt64 = 0
        for _ in 0..<5000 {
            rig.result("busy")
            rig.idle("busy", frames: frames)
            frames += 1
            rig.request("cam")
            rig.advance(ms: 1)
            rig.tick()
        }
        #expect(rig.assigned.filter { $0.hasSuffix("busy") }.count > 1000, "the busy thread kept being assigned")
        #expect(rig.broker.line.count <= 2 * rig.broker.threads.count + 64 + 200, "\(rig.broker.line.count) entries")
    }

    @Test("caps: threads and nodes beyond the limits are refused, counted")
    func caps() {
        var rig = BrokerRig {
            $0.maxThreads = 3
            $0.maxNodes = 2
        }
        for index in 0..<5 { rig.idle("t\(index)") }
        #expect(rig.counters.value("dispatch_threads_refused_cap") == 2)
        for index in 0..<4 { rig.request("cam\(index)", wanted: 0) }
        #expect(rig.counters.value("dispatch_nodes_refused_cap") == 2)
        #expect(rig.broker.figures.threads == 3)
    }

    @Test("silent idle threads and silent nodes are forgotten after 3 s")
    func expiry() {
        var rig = BrokerRig()
        rig.idle("t")
        rig.advance(ms: 3000)
        rig.tick()
        #expect(rig.counters.value("dispatch_threads_expired") == 1)
        rig.request("cam")
        #expect(rig.assigned.isEmpty)
        rig.advance(ms: 3000)
        rig.tick()
        #expect(rig.counters.value("dispatch_nodes_expired") == 1)
        rig.idle("t")
        #expect(rig.assigned.isEmpty, "the node's demand lapsed with it")
    }
}
