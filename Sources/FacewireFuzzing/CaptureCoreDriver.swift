import FacewireProtocol
import FacewireRuntime
import FacewireVocabulary
import FacewireCaptureCore

/// Structure-aware fuzzing of ``CaptureCore``: arbitrary bytes become a configuration and a sequence of valid inputs
/// with arbitrary field values (Readys from any identity with any version and worker id, assignments for any thread
/// with any number, frames with any capture and presentation time, clocks that jump, sends that fail, a camera lost
/// and back, the source ending), and the core's promises are checked with preconditions, so that a fuzzer reports a
/// broken one as a crash:
///
/// * no frame goes to a connection without a live credit: an assignment, received within 3 s, for a thread attached
///   on that connection (its last Ready within 15 s), each used by one send at most (a model of attachments and
///   assignments, kept beside the core; it ignores hand-backs, whose names do not say which connection's credit went,
///   so it is looser there);
/// * every assignment is used by one send or handed back to the collector once (`returned` or `unreachable`);
/// * no request wants more than 64 threads;
/// * every sequence of every epoch is sent or reported skipped exactly once, 0 up to the epoch's `StreamEnd`, which
///   comes once per epoch;
/// * the credits held never exceed `--max-workers`.
///
/// ``run(_:)`` takes at most ``maxSteps`` inputs, so a run's time and memory are bounded whatever the bytes.
public enum CaptureCoreDriver {
    /// Inputs taken from one byte string at most.
    public static let maxSteps = 4096

    /// What one run did, for tests that want to know it exercised something.
    public struct Summary: Sendable {
        public var sent = 0
        public var skipped = 0
        public var epochs = 0
    }

    private typealias Core = CaptureCore<Int>

    /// Reads the fuzzer's bytes as numbers; zeros once they run out.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0
        var isAtEnd: Bool { index >= bytes.count }
        mutating func byte() -> UInt8 {
            defer { index += 1 }
            return index < bytes.count ? bytes[index] : 0
        }
        mutating func word() -> UInt64 { (0..<8).reduce(0) { value, _ in value << 8 | UInt64(byte()) } }
    }

    /// The credits the core may use, as the protocol defines them: a thread's connection (its last Ready within 15 s)
    /// → when assignments for it came, oldest first.
    private final class Model {
        var attached: [String: (identity: [UInt8], at: UInt64)] = [:]
        var credits: [[UInt8]: [UInt64]] = [:]
        var assignments = 0
        var sends = 0
        var nowNs: UInt64 = 0
        var failures: [[UInt8]: Core.SendOutcome] = [:]
        var sent: [UInt64: Set<UInt64>] = [:]
    }

    /// Runs the inputs encoded in `bytes`; traps (precondition) when the core breaks a promise.
    @discardableResult
    public static func run(_ bytes: [UInt8]) -> Summary {
        var reader = Reader(bytes: bytes)
        let pacing: Core.Pacing = switch reader.byte() % 4 {
        case 0: .live
        case 1: .timed(fps: Double(reader.byte() % 120) + 0.5, followsMediaTime: false)
        case 2: .timed(fps: 30, followsMediaTime: true)
        default: .unpaced
        }
        var settings = Core.Settings(stream: "fuzz", nodeID: "fuzz", frameEndpoint: "tcp://f:1", epoch: reader.word(), pacing: pacing)
        settings.maxWorkers = 1 + Int(reader.byte() % 8)
        let options = reader.byte()
        settings.maxFPS = options & 1 != 0 ? Double(reader.byte()) / 4 : nil
        settings.maxFrames = options & 2 != 0 ? Int(reader.byte()) : nil
        settings.maxAgeMilliseconds = Int(truncatingIfNeeded: Int64(bitPattern: reader.word()))
        settings.statisticsIntervalNs = options & 4 != 0 ? 1_000_000_000 : 0
        let maxWorkers = settings.maxWorkers

        let model = Model()
        var nowNs = reader.word() >> 2
        var wallUs = Int64(bitPattern: reader.word())
        var now: Core.Instant { Core.Instant(monotonicNs: nowNs, wallUs: wallUs) }
        let counters = Counters()
        var core = Core(settings: settings, at: now)
        /// The frame socket, as the model sees it: checks the credit, then fails as told or records the send.
        func transmit(_ transmission: Core.Transmission) -> Core.SendOutcome {
            let identity = transmission.identity
            let frame = transmission.frame
            let live = (model.credits[identity] ?? []).filter { model.nowNs < $0 || model.nowNs - $0 <= 3_000_000_000 }
            precondition(!live.isEmpty, "seq \(frame.header.seq) sent to a connection without a live credit")
            model.credits[identity] = Array(live.dropFirst())
            model.sends += 1
            if let failure = model.failures[identity] {
                model.sends -= 1  // a failed send hands the thread back as unreachable
                return failure
            }
            precondition(model.sent[frame.header.epoch, default: []].insert(frame.header.seq).inserted,
                         "seq \(frame.header.seq) of epoch \(frame.header.epoch) sent twice")
            return .sent
        }
        var outputs: [Core.Output] = []
        /// Carries out the effects as a shell does: each send reported back to the core, counts.
        func perform(_ output: Core.Output) {
            for output in core.settle(output, at: { now }, transmit: transmit) {
                outputs.append(output)
                counters.add(output.counts)
            }
        }
        perform(core.start(at: now))
        var lost = false
        var payload = 0
        for _ in 0..<maxSteps where !reader.isAtEnd {
            model.nowNs = nowNs
            switch reader.byte() % 16 {
            case 12, 13, 14, 15:
                // An assignment for one of the names Readys use (or one never attached), with any number.
                let pick = reader.byte()
                var assignment = Assignment()
                assignment.worker = pick & 0xE0 != 0 ? "w\(pick % 12)" : "unknown"
                assignment.number = reader.byte() == 0xFF ? reader.word() : UInt64(pick)
                model.assignments += 1
                if let attached = model.attached[assignment.worker], nowNs < attached.at || nowNs - attached.at <= 15_000_000_000 {
                    model.credits[attached.identity, default: []].append(nowNs)
                }
                perform(core.assigned(assignment, at: now))
            case 0, 1, 2:
                let pick = reader.byte()
                let identity: [UInt8] = switch pick % 16 {
                case 0: []
                case 1: [UInt8](repeating: pick, count: 256 + Int(reader.byte()))
                default: [pick % 12]
                }
                let length = Int(reader.byte())
                var ready = Ready(worker: length < 200 ? "w\(length % 12)" : String(repeating: "w", count: length * 40))
                if reader.byte() == 0xFF { ready.version = UInt32(truncatingIfNeeded: reader.word()) }
                let valid = ready.version == Wire.dispatchVersion && (1...255).contains(identity.count)
                let refused = counters.value("attachments_refused_cap")
                perform(core.ready(ready, from: identity, at: now))
                if valid, counters.value("attachments_refused_cap") == refused, ready.worker.utf8.count <= 256 {
                    model.attached[ready.worker] = (identity, nowNs)
                }
            case 3:
                perform(core.malformedReady(ProtocolError(reader.byte() & 1 == 0 ? .malformed : .unsupportedVersion, "fuzz"), at: now))
            case 4, 5, 6:
                guard core.next(at: now) == .read, !lost else { continue }
                let kind = reader.byte()
                payload += 1
                let frame = Core.ReadFrame(
                    payload: payload, width: Int(truncatingIfNeeded: reader.word()), height: Int(reader.byte()),
                    orientation: UInt32(reader.byte()),
                    captureTimeUs: kind & 1 != 0 ? Int64(bitPattern: reader.word()) : nil,
                    mediaTimeSeconds: kind & 2 != 0 ? Double(bitPattern: reader.word()) : Double(payload) / 30)
                perform(core.frameRead(frame, at: now))
            case 7, 8:
                let step = reader.byte()
                nowNs = nowNs.addingClamped(UInt64(step) * UInt64(step) * 200_000)  // up to 13 s
                wallUs = step == 0xFF ? Int64(bitPattern: reader.word()) : wallUs.addingClamped(Int64(step) * Int64(step) * 200)
                model.nowNs = nowNs
                perform(core.tick(at: now, totals: counters.totals))
            case 9:
                guard core.next(at: now) == .read, !lost else { continue }
                perform(core.sourceEnded(at: now))
            case 10:
                perform(lost ? core.sourceBack(at: now) : core.sourceLost(at: now))
                lost.toggle()
            default:
                let pick = reader.byte()
                model.failures[[pick % 12]] = switch pick >> 6 {
                case 0: .gone
                case 1: .full
                default: nil
                }
            }
            precondition(core.creditsHeld <= maxWorkers, "\(core.creditsHeld) credits held, the cap is \(maxWorkers)")
        }
        model.nowNs = nowNs
        perform(core.stop(at: now))
        precondition(core.next(at: now) == .finished, "not finished after stop")

        // Every assignment: used by one send, or handed back once; no request wants more than the window.
        var handedBack = 0
        for case .control(.request(let request)) in outputs.flatMap(\.actions) {
            precondition(request.wanted <= 64, "a request wants \(request.wanted) threads")
            precondition(request.returned.count <= 16 && request.unreachable.count <= 16, "a request lists too many threads")
            handedBack += request.returned.count + request.unreachable.count
        }
        precondition(model.assignments == model.sends + handedBack,
                     "\(model.assignments) assignments, \(model.sends) sends and \(handedBack) handed back")

        // Every sequence of every epoch: sent or skipped exactly once, 0 up to its StreamEnd.
        var covered = model.sent.mapValues { Array($0) }
        var ends: [UInt64: [UInt64]] = [:]
        var summary = Summary(sent: model.sent.values.reduce(0) { $0 + $1.count })
        for action in outputs.flatMap(\.actions) {
            guard case .control(let body) = action else { continue }
            switch body {
            case .skipped(let skipped):
                precondition(skipped.count > 0 && skipped.count <= UInt64(maxSteps), "a skip run of \(skipped.count)")
                covered[skipped.epoch, default: []] += Array(skipped.firstSeq..<skipped.firstSeq + skipped.count)
                summary.skipped += Int(skipped.count)
            case .end(let end): ends[end.epoch, default: []].append(end.nextSeq)
            default: break
            }
        }
        for (epoch, seqs) in covered {
            precondition(ends[epoch]?.count == 1, "epoch \(epoch): \(ends[epoch]?.count ?? 0) StreamEnds")
            precondition(seqs.sorted() == Array(0..<(ends[epoch]?.first ?? 0)), "epoch \(epoch): sequences not each once")
        }
        for (epoch, values) in ends where covered[epoch] == nil {
            precondition(values == [0], "epoch \(epoch) had no frame but ended at \(values)")
        }
        summary.epochs = ends.count
        return summary
    }
}
