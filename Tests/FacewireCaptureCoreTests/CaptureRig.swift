import FacewireProtocol
import FacewireRuntime
import FacewireVocabulary

@testable import FacewireCaptureCore
import FacewireCollectorCore

/// A ``CaptureCore`` driven by hand: a fake clock, a fake frame socket that records what was sent (and can be told
/// to fail), everything the core said to the collector, and the collector's real ``DispatchBroker``, which answers the
/// core's requests with assignments of the threads that said they are idle (``ready(_:worker:)``). No sockets, no
/// sleeps.
struct CaptureRig {
    typealias Core = CaptureCore<Int>

    /// The frame socket: records sends; an identity in `failures` fails its sends with that outcome.
    final class Link {
        struct Sent {
            var identity: String
            var worker: String
            var header: FrameHeader
            var payload: Int
        }
        var sent: [Sent] = []
        var failures: [String: Core.SendOutcome] = [:]
        /// Called before each send with the identity: a test's own check.
        var check: (String, FrameHeader) -> Void = { _, _ in }
        /// The protocol's rule, kept beside the core: a connection may be sent a frame only against an assignment of
        /// its thread that reached the node within 3 s and was neither used nor handed back (grant times, oldest first).
        var allowances: [String: [UInt64]] = [:]
        var violations: [String] = []
        var nowNs: UInt64 = 0

        func transmit(_ identity: [UInt8], _ worker: String, _ frame: Core.Outgoing) -> Core.SendOutcome {
            let name = String(decoding: identity, as: UTF8.self)
            check(name, frame.header)
            if let granted = allowances[name]?.first, nowNs < granted || nowNs - granted <= 3_000_000_000 {
                // A failed send hands its thread back as unreachable, which takes the allowance then.
                if failures[name] == nil { allowances[name]?.removeFirst() }
            } else {
                violations.append("seq \(frame.header.seq) of epoch \(frame.header.epoch) to \(name) without a live assignment")
            }
            if let failure = failures[name] { return failure }
            sent.append(Sent(identity: name, worker: worker, header: frame.header, payload: frame.payload))
            return .sent
        }
    }

    static let startNs: UInt64 = 10_000_000_000
    static let startWallUs: Int64 = 1_700_000_000_000_000
    static let epoch: UInt64 = 42

    let link = Link()
    let counters = Counters()
    var core: Core
    var clockNs = startNs
    /// Every effect so far, in order (each send already carried out and reported back).
    var outputs: [Core.Output] = []
    /// The collector's side of dispatch, and what it answered (counted with the node's counters).
    var broker = DispatchBroker()
    /// Frames each thread has been sent (what its Idle says), by connection.
    var framesReceived: [String: UInt64] = [:]
    static let node: [UInt8] = Array("node".utf8)
    /// Which connection each thread name attached on last, and when (the rig's copy, for the link's rule).
    var attachedAt: [String: (identity: String, ns: UInt64)] = [:]

    /// An assignment is about to reach the core: the link allows one frame to the thread's connection, if the thread's
    /// Ready reached the node within 15 s (SPEC 3.1).
    private mutating func allow(_ assignment: Assignment) {
        guard let attached = attachedAt[assignment.worker], clockNs - attached.ns <= 15_000_000_000 else { return }
        link.allowances[attached.identity, default: []].append(clockNs)
    }

    init(_ pacing: Core.Pacing, configure: (inout Core.Settings) -> Void = { _ in }) {
        var settings = Core.Settings(stream: "cam", nodeID: "node", frameEndpoint: "tcp://h:5555", epoch: Self.epoch, pacing: pacing)
        settings.statisticsIntervalNs = 0
        configure(&settings)
        core = Core(settings: settings, at: Core.Instant(monotonicNs: Self.startNs, wallUs: Self.startWallUs))
        let started = core.start(at: now)
        perform(started)
    }

    /// Carries out the core's effects as the shell does: each send on the link (reported back to the core), counts,
    /// and each request to the broker, whose assignments go back to the core.
    mutating func perform(_ output: Core.Output) {
        let link = link
        let now = now
        var pending = [output]
        var rounds = 0
        while !pending.isEmpty {
            rounds += 1
            precondition(rounds < 10_000, "the node and the broker ping-pong")
            let next = pending.removeFirst()
            link.nowNs = clockNs
            for output in core.settle(next, at: { now }, transmit: { link.transmit($0.identity, $0.worker, $0.frame) }) {
                outputs.append(output)
                counters.add(output.counts)
                for case .control(.request(let request)) in output.actions {
                    for name in request.returned + request.unreachable {
                        guard let identity = attachedAt[name]?.identity, link.allowances[identity]?.isEmpty == false else { continue }
                        link.allowances[identity]?.removeFirst()
                    }
                    var answer = CollectorOutput()
                    broker.request(request, from: Self.node, at: clockNs, into: &answer)
                    pending += assignments(answer)
                }
            }
        }
    }

    /// The broker's assignments in `answer`, handed to the core (its counts added to the node's).
    private mutating func assignments(_ answer: CollectorOutput) -> [Core.Output] {
        counters.add(answer.counts)
        return answer.replies.compactMap { reply in
            guard case .assignment(let assignment) = reply.envelope.body else { return nil }
            assignmentNumber = max(assignmentNumber, assignment.number)
            allow(assignment)
            return core.assigned(assignment, at: now)
        }
    }

    var now: Core.Instant {
        Core.Instant(monotonicNs: clockNs, wallUs: Self.startWallUs + Int64((clockNs - Self.startNs) / 1000))
    }

    mutating func advance(ms: UInt64) { clockNs += ms * 1_000_000 }
    /// Assignments sent so far (their numbers).
    var assignmentNumber: UInt64 = 0

    /// A thread on connection `identity` attaches (Ready) and tells the broker it is idle (after the result of the
    /// frame it was sent, if any): what a credit was in dispatch protocol 1.
    mutating func ready(_ identity: String, worker: String? = nil) {
        attach(identity, worker: worker)
        idle(identity, worker: worker)
    }
    /// Thread `identity` tells the broker it is idle: a result first if it was sent a frame since its last Idle.
    mutating func idle(_ identity: String, worker: String? = nil) {
        let connection = Array(identity.utf8)
        let frames = UInt64(link.sent.filter { $0.identity == identity }.count)
        var answer = CollectorOutput()
        if frames > framesReceived[identity, default: 0] {
            broker.result(for: core.settings.stream, from: connection, at: clockNs, into: &answer)
        }
        framesReceived[identity] = frames
        var message = Idle()
        message.worker = worker ?? identity
        message.framesReceived = frames
        broker.idle(message, from: connection, at: clockNs, into: &answer)
        for output in assignments(answer) { perform(output) }
    }
    /// A thread attaches (its Ready) without being assigned.
    mutating func attach(_ identity: String, worker: String? = nil) {
        attachedAt[worker ?? identity] = (identity, clockNs)
        let output = core.ready(Ready(worker: worker ?? identity), from: Array(identity.utf8), at: now)
        perform(output)
    }
    /// An assignment of thread `worker` to this node, made by hand (not by the broker).
    mutating func assign(_ worker: String) {
        assignmentNumber += 1
        var assignment = Assignment()
        assignment.worker = worker
        assignment.number = assignmentNumber
        allow(assignment)
        perform(core.assigned(assignment, at: now))
    }
    /// The requests sent so far: `wanted` and the names handed back.
    var requests: [DispatchRequest] {
        outputs.flatMap(\.actions).compactMap { if case .control(.request(let request)) = $0 { request } else { nil } }
    }
    mutating func read(_ payload: Int, media: Double? = nil) {
        let output = core.frameRead(Core.ReadFrame(payload: payload, width: 4, height: 3, mediaTimeSeconds: media), at: now)
        perform(output)
    }
    mutating func tick() {
        let output = core.tick(at: now, totals: counters.totals)
        perform(output)
        var answer = CollectorOutput()
        broker.tick(at: clockNs, into: &answer)
        for output in assignments(answer) { perform(output) }
    }
    mutating func ended() {
        let output = core.sourceEnded(at: now)
        perform(output)
    }
    mutating func stop() {
        let output = core.stop(at: now)
        perform(output)
    }
    var next: Core.Step { core.next(at: now) }

    /// The control messages so far but requests (``requests``), as short strings: `hello e/next`, `skip e/first+count`,
    /// `end e/next`.
    var controls: [String] {
        outputs.flatMap(\.actions).compactMap {
            guard case .control(let body) = $0 else { return nil }
            switch body {
            case .hello(let hello): return "hello \(hello.epoch)/\(hello.nextSeq)"
            case .skipped(let skipped): return "skip \(skipped.epoch)/\(skipped.firstSeq)+\(skipped.count)"
            case .end(let end): return "end \(end.epoch)/\(end.nextSeq)"
            case .request: return nil
            default: return "other"
            }
        }
    }

    /// Control messages other than hellos.
    var reports: [String] { controls.filter { !$0.hasPrefix("hello") } }

    /// Log lines at warning or above.
    var warnings: [String] {
        outputs.flatMap(\.logs).compactMap { $0.level == .warning || $0.level == .error ? $0.message : nil }
    }

    /// `seq→identity` of what was sent.
    var sent: [String] { link.sent.map { "\($0.header.seq)→\($0.identity)" } }
}
