import FacewireFuzzing
import FacewireProtocol
import FacewireRuntime
import Testing

@testable import FacewireCaptureCore


@Suite("CaptureCore: properties over random inputs")
struct CaptureCorePropertyTests {
    static let pacings: [CaptureRig.Core.Pacing] = [.live, .timed(fps: 30, followsMediaTime: false), .timed(fps: 5, followsMediaTime: true), .unpaced]

    @Test("every seq is sent or reported skipped exactly once, gap-free per epoch; no frame without a live assignment",
          arguments: 0..<40)
    func invariants(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let pacing = Self.pacings[Int(seed) % Self.pacings.count]
        var rig = CaptureRig(pacing) {
            $0.maxWorkers = 4
            $0.maxFPS = seed % 5 == 0 ? 20 : nil
            $0.maxFrames = seed % 7 == 0 ? 50 : nil
        }
        // The link checks every send against the assignments that reached the node (CaptureRig.Link.allowances).
        let identities = ["a", "b", "c", "d", "e", "f"]
        var lost = false
        var media = 0.0
        for _ in 0..<400 {
            switch random.next() % 10 {
            case 0, 1, 2:
                if random.next() % 12 == 0 {
                    // Hostile Readys: unusable identities, wrong versions, a very long worker id. None may grant a credit.
                    var ready = Ready(worker: String(repeating: "x", count: Int(random.next() % 5000)))
                    let identity: [UInt8]
                    switch random.next() % 3 {
                    case 0: identity = []
                    case 1: identity = [UInt8](repeating: 1, count: 256 + Int(random.next() % 100))
                    default: identity = Array("h".utf8)  // usable, but the version is wrong
                    }
                    if identity.count == 1 || random.next() % 2 == 0 { ready.version = UInt32(truncatingIfNeeded: random.next()) | 2 }
                    rig.perform(rig.core.ready(ready, from: identity, at: rig.now))
                    continue
                }
                let identity = identities[Int(random.next() % UInt64(identities.count))]
                if random.next() % 8 == 0 { rig.link.failures[identity] = random.next() % 2 == 0 ? .gone : .full }
                else { rig.link.failures[identity] = nil }
                rig.ready(identity)
            case 3, 4, 5:
                guard rig.next == .read, !lost else { continue }
                if random.next() % 40 == 0, rig.core.numbered > 20 {
                    rig.ended()
                } else {
                    media += Double(random.next() % 300) / 1000
                    if random.next() % 10 == 0 {
                        // A source with odd times: every capture time at its extremes, presentation times that jump.
                        let times: [Int64?] = [Int64.min, Int64.max, 0, -1, nil]
                        let medias: [Double?] = [-1e300, 1e300, .nan, .infinity, -0.0, nil]
                        rig.perform(rig.core.frameRead(
                            CaptureRig.Core.ReadFrame(
                                payload: -1, width: Int.max, height: -5, orientation: UInt32.max,
                                captureTimeUs: times[Int(random.next() % UInt64(times.count))],
                                mediaTimeSeconds: medias[Int(random.next() % UInt64(medias.count))]),
                            at: rig.now))
                    } else {
                        rig.read(Int(rig.clockNs % 1000), media: media)
                    }
                }
            case 6, 7:
                rig.advance(ms: random.next() % 200)
                rig.tick()
            case 8:
                rig.advance(ms: random.next() % 4000)
                rig.tick()
            default:
                guard pacing == .live else { continue }
                if lost {
                    rig.perform(rig.core.sourceBack(at: rig.now))
                } else {
                    rig.perform(rig.core.sourceLost(at: rig.now))
                }
                lost.toggle()
            }
        }
        rig.stop()

        #expect(rig.core.numbered > 0 && !rig.link.sent.isEmpty, "seed \(seed): the run exercised nothing")
        #expect(rig.link.violations.isEmpty, "seed \(seed): \(rig.link.violations.prefix(3))")
        #expect(rig.requests.allSatisfy { $0.wanted <= 4 }, "seed \(seed): never more threads than attached")
        // Per epoch: what was sent and what was skipped.
        var covered: [UInt64: [UInt64]] = [:]
        for sent in rig.link.sent { covered[sent.header.epoch, default: []].append(sent.header.seq) }
        var ends: [UInt64: [UInt64]] = [:]
        for action in rig.outputs.flatMap(\.actions) {
            guard case .control(let body) = action else { continue }
            switch body {
            case .skipped(let skipped):
                #expect(skipped.count > 0)
                covered[skipped.epoch, default: []] += Array(skipped.firstSeq..<(skipped.firstSeq + skipped.count))
            case .end(let end): ends[end.epoch, default: []].append(end.nextSeq)
            default: break
            }
        }
        for (epoch, seqs) in covered {
            #expect(ends[epoch]?.count == 1, "seed \(seed): epoch \(epoch) ends once, got \(ends[epoch] ?? [])")
            let next = ends[epoch]?.first ?? 0
            #expect(seqs.sorted() == Array(0..<next), "seed \(seed): epoch \(epoch) covers 0..<\(next) exactly once")
        }
        for (epoch, values) in ends where covered[epoch] == nil {
            #expect(values == [0], "seed \(seed): an epoch with no frames ends at 0")
        }
        #expect(rig.next == .finished)
    }
}
