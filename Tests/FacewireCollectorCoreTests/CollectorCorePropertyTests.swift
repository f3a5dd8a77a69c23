import FacewireFuzzing
import FacewireProtocol
import FacewireVocabulary
import Testing
@testable import FacewireCollectorCore

/// Random sequences of well-formed messages with arbitrary field values, legitimate and hostile mixed, driven
/// through the core: it never traps, its state stays within the caps, each call's output is bounded whatever the
/// values, and every (stream, epoch) is published in order, each sequence at most once, with a summary that
/// accounts for every sequence (runs by their length).
@Suite("CollectorCore properties (hostile values)")
struct CollectorCorePropertyTests {
    static let limits = CollectorLimits(
        maxDelay: 100_000_000, maxPending: 8, maxStreams: 5, maxCaptures: 4, maxWorkers: 3, maxMetricStreams: 3,
        streamIdleTimeout: 2_000_000_000, captureExpiry: 3_000_000_000, workerExpiry: 3_000_000_000,
        statisticsInterval: 1_000_000_000)

    struct Values {
        var rng: SplitMix64

        mutating func pick<T>(_ options: [T]) -> T { options[Int.random(in: 0..<options.count, using: &rng)] }
        mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }

        mutating func seq(near head: UInt64) -> UInt64 {
            if chance(70) { return head &+ UInt64.random(in: 0..<12, using: &rng) }
            return pick([0, 1, 1 << 32, 1 << 40, 1 << 63, .max - 1, .max, UInt64.random(in: 0...UInt64.max, using: &rng)])
        }

        mutating func count() -> UInt64 {
            chance(70) ? UInt64.random(in: 0..<6, using: &rng) : pick([1 << 40, 1 << 63, .max - 1, .max])
        }

        mutating func time(wall: Int64) -> Int64 {
            chance(60) ? wall - Int64.random(in: 0..<100_000, using: &rng) : pick([.min, -1, 0, 1, .max, wall + 200_000_000_000])
        }

        mutating func float() -> Float {
            chance(80) ? Float.random(in: 0..<500, using: &rng) : pick([.nan, .infinity, -.infinity, 1e30, -1, 0])
        }
    }

    @Test("arbitrary field values never break the stream's invariants", arguments: 0..<60 as Range<UInt64>)
    func hostileSequences(seed: UInt64) {
        var values = Values(rng: SplitMix64(seed: seed &* 7919 &+ 17))
        var core = CollectorCore(limits: Self.limits)
        var now: UInt64 = 1_000_000_000
        var wall: Int64 = 1_732_240_000_000_000
        var published: [StreamMessage] = []
        var nextSeq: [String: UInt64] = [:]
        let streams = ["a", "b", "c", "d", "e", "f", "g", "", "no spaces"]
        let epochs: [UInt64] = [0, 1, 2, .max]

        for _ in 0..<400 {
            let stream = values.pick(streams)
            let epoch = values.pick(epochs)
            let head = nextSeq[stream, default: 0]
            let body: Envelope.OneOf_Body
            switch Int.random(in: 0..<100, using: &values.rng) {
            case 0..<10:
                var hello = Hello()
                hello.dispatch = Wire.dispatchVersion
                hello.role = values.pick([.capture, .worker, .tail, .unspecified, .UNRECOGNIZED(42)])
                hello.stream = stream
                hello.epoch = epoch
                hello.nextSeq = values.seq(near: 0)
                hello.frameEndpoint = values.pick(["tcp://*:5556", "", String(repeating: "x", count: 300)])
                hello.curvePublicKey = values.pick(["", String(repeating: "k", count: 40), "short"])
                body = .hello(hello)
            case 10..<65:
                var result = FrameResult()
                result.stream = stream
                result.epoch = epoch
                result.seq = values.seq(near: head)
                nextSeq[stream] = max(head, result.seq &+ 1)
                result.captureTimeUs = values.time(wall: wall)
                result.status = values.pick([.processed, .processed, .processed, .dropped, .error, .UNRECOGNIZED(9)])
                result.reason = values.pick(["", "stale", "decodeFailed: x", "weird\u{0}reason"])
                result.faces = (0..<Int.random(in: 0..<4, using: &values.rng)).map { _ in
                    var face = WireFace()
                    face.bounds = .with {
                        $0.x = values.float()
                        $0.y = values.float()
                        $0.width = values.float()
                        $0.height = values.float()
                    }
                    face.confidence = values.chance(90) ? 0.9 : values.float()
                    return face
                }
                body = .result(result)
            case 65..<80:
                var skipped = Skipped()
                skipped.stream = stream
                skipped.epoch = epoch
                skipped.firstSeq = values.seq(near: head)
                skipped.count = values.count()
                skipped.reason = values.pick(["no-worker", "", String(repeating: "r", count: 300)])
                skipped.captureTimeUs = values.time(wall: wall)
                body = .skipped(skipped)
            case 80..<86:
                var end = StreamEnd()
                end.stream = stream
                end.epoch = epoch
                end.nextSeq = values.seq(near: head)
                body = .end(end)
            case 86..<88:
                var reset = ResetRequest()
                reset.stream = values.pick(["", stream])
                reset.requestID = "r"
                body = .reset(reset)
            default:
                body = .welcome(Welcome())
            }
            let instant = CollectorCore.Instant(monotonicNs: now, wallUs: wall)
            let identity: [UInt8] = [UInt8.random(in: 0..<8, using: &values.rng)]
            var outputs = [core.handle(Envelope(body), from: identity, peerAddress: nil, at: instant)]
            if values.chance(30) {
                let step = UInt64.random(in: 0..<400_000_000, using: &values.rng)
                now += step
                wall += Int64(step / 1000)
                outputs.append(core.tick(at: CollectorCore.Instant(monotonicNs: now, wallUs: wall)))
            }
            for output in outputs {
                // Bounded work per call whatever the values: runs are one message, short runs at most maxPending each.
                #expect(output.publish.count < 2_000, "seed \(seed): \(output.publish.count) messages in one step")
                published += output.publish
            }
            let gauges = core.gauges(at: now)
            #expect(gauges.streams <= 2 * Self.limits.maxStreams, "seed \(seed): \(gauges.streams) streams open")
            #expect(gauges.captures <= Self.limits.maxCaptures && gauges.workers <= Self.limits.maxWorkers)
            #expect(gauges.pending <= gauges.streams * (Self.limits.maxPending + 1))
        }
        // Let everything end: idle expiry closes every stream.
        for _ in 0..<5 {
            now += 1_000_000_000
            wall += 1_000_000
            published += core.tick(at: CollectorCore.Instant(monotonicNs: now, wallUs: wall)).publish
        }
        #expect(core.gauges(at: now).streams == 0, "seed \(seed): idle streams were not closed")

        // Per (stream, epoch): in order, each sequence at most once, and the summary accounts for all of them.
        var next: [String: UInt64] = [:]
        var covered: [String: UInt64] = [:]
        var ended: Set<String> = []
        for message in published {
            let key = "\(message.stream)/\(message.epoch)"
            switch message.body {
            case .frame(let frame)?:
                #expect(!ended.contains(key), "seed \(seed): \(key) frame after its end")
                if let expected = next[key] {
                    #expect(frame.seq == expected, "seed \(seed): \(key) expected \(expected), got \(frame.seq)")
                }
                let length = frame.runLength > 1 ? frame.runLength : 1
                #expect(frame.runLength == 0 || frame.runLength > UInt64(Self.limits.maxPending), "short runs are expanded")
                let (after, overflow) = frame.seq.addingReportingOverflow(length)
                next[key] = overflow ? .max : after
                covered[key] = (covered[key] ?? 0).addingClamped(length)
                #expect(frame.faces.allSatisfy { $0.bounds.x.isFinite && $0.bounds.width.isFinite })
            case .end(let summary)?:
                #expect(!ended.contains(key), "seed \(seed): \(key) ended twice")
                ended.insert(key)
                #expect(summary.frames == (covered[key] ?? 0), "seed \(seed): \(key) summary \(summary.frames) != \(covered[key] ?? 0)")
                #expect(summary.processed &+ summary.dropped &+ summary.errors == summary.frames || summary.frames == .max)
            default:
                break
            }
        }
        for key in covered.keys { #expect(ended.contains(key), "seed \(seed): \(key) never ended") }
        #expect(covered.values.reduce(0) { $0.addingClamped($1) } > 0, "seed \(seed): nothing was published")
        #expect(ended.count >= 2, "seed \(seed): only \(ended.count) streams ended")
    }
}
