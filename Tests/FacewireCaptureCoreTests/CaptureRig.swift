import FacewireProtocol
import FacewireRuntime
import FacewireVocabulary

@testable import FacewireCaptureCore

/// A ``CaptureCore`` driven by hand: a fake clock, a fake frame socket that records what was sent (and can be told
/// to fail), and everything the core said to the collector. No sockets, no sleeps.
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
        /// Called before each send with the identity: a test's own check (for example, that it holds a credit).
        var check: (String, FrameHeader) -> Void = { _, _ in }

        func transmit(_ identity: [UInt8], _ worker: String, _ frame: Core.Outgoing) -> Core.SendOutcome {
            let name = String(decoding: identity, as: UTF8.self)
            check(name, frame.header)
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

    init(_ pacing: Core.Pacing, configure: (inout Core.Settings) -> Void = { _ in }) {
        var settings = Core.Settings(stream: "cam", nodeID: "node", frameEndpoint: "tcp://h:5555", epoch: Self.epoch, pacing: pacing)
        settings.statisticsIntervalNs = 0
        configure(&settings)
        core = Core(settings: settings, at: Core.Instant(monotonicNs: Self.startNs, wallUs: Self.startWallUs))
        let started = core.start(at: now)
        perform(started)
    }

    /// Carries out the core's effects as the shell does: each send on the link (reported back to the core), counts.
    mutating func perform(_ output: Core.Output) {
        let link = link
        let now = now
        for output in core.settle(output, at: { now }, transmit: { link.transmit($0.identity, $0.worker, $0.frame) }) {
            outputs.append(output)
            counters.add(output.counts)
        }
    }

    var now: Core.Instant {
        Core.Instant(monotonicNs: clockNs, wallUs: Self.startWallUs + Int64((clockNs - Self.startNs) / 1000))
    }

    mutating func advance(ms: UInt64) { clockNs += ms * 1_000_000 }
    mutating func ready(_ identity: String, worker: String? = nil) {
        let output = core.ready(Ready(worker: worker ?? identity), from: Array(identity.utf8), at: now)
        perform(output)
    }
    mutating func read(_ payload: Int, media: Double? = nil) {
        let output = core.frameRead(Core.ReadFrame(payload: payload, width: 4, height: 3, mediaTimeSeconds: media), at: now)
        perform(output)
    }
    mutating func tick() {
        let output = core.tick(at: now, totals: counters.totals)
        perform(output)
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

    /// The control messages so far, as short strings: `hello e/next`, `skip e/first+count`, `end e/next`.
    var controls: [String] {
        outputs.flatMap(\.actions).compactMap {
            guard case .control(let body) = $0 else { return nil }
            switch body {
            case .hello(let hello): return "hello \(hello.epoch)/\(hello.nextSeq)"
            case .skipped(let skipped): return "skip \(skipped.epoch)/\(skipped.firstSeq)+\(skipped.count)"
            case .end(let end): return "end \(end.epoch)/\(end.nextSeq)"
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
