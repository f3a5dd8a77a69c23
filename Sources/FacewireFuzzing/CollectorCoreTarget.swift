import FacewireCollectorCore
import FacewireProtocol
import FacewireVocabulary
import FacewireTracking

/// Structure-aware fuzzing of the collector's decisions: the fuzzer's bytes become a program of well-formed
/// control messages with hostile field values (``HostileMessages``), from a few peers, interleaved with ticks and
/// jumps of the injected clock, driven through one ``CollectorCore``.
///
/// Besides not trapping, the core must keep its promises, checked with preconditions (so that libFuzzer reports a
/// broken one as a crash):
/// - **Ordered, at most once**: per (stream, epoch), published frames (a dropped run counting `runLength`
///   sequences) are contiguous and strictly increasing; nothing is published for it after its end.
/// - **Bounded**: what the core remembers stays within a bound derived from its caps, whatever the input.
/// - **Bounded work**: one step publishes at most a bound of messages derived from the caps, however long the runs
///   it is told about.
public enum CollectorCoreTarget {
    /// Small caps, so that the fuzzer reaches them.
    public static let limits = CollectorLimits(
        maxDelay: 50_000_000, maxPending: 8, maxPendingBytes: 64 << 10, maxStreams: 4, maxCaptures: 4, maxWorkers: 4, maxMetricStreams: 2,
        streamIdleTimeout: 2_000_000_000, captureExpiry: 3_000_000_000, workerExpiry: 3_000_000_000,
        statisticsInterval: 500_000_000, noticeInterval: 1_000_000_000)

    static let tracking = FaceTracker.Configuration(maxAge: 1, minHits: 1, maxTracks: 8)

    /// The most steps one input runs (libFuzzer's -max_len bounds it too).
    static let maxSteps = 400

    /// What one input's messages became (the suite checks that the generator reaches the interesting cases).
    public struct Tally: Sendable, Equatable {
        public var frames = 0, runs = 0, ends = 0, refusals = 0

        public static func += (a: inout Tally, b: Tally) {
            a.frames += b.frames
            a.runs += b.runs
            a.ends += b.ends
            a.refusals += b.refusals
        }
    }

    @discardableResult
    public static func run(_ bytes: [UInt8]) -> Tally {
        var tally = Tally()
        var input = FuzzReader(bytes)
        var core = CollectorCore(limits: limits, tracking: tracking)
        core.publishEndpoint = "tcp://127.0.0.1:5557"
        var monotonic: UInt64 = 1_000_000_000
        var wall: Int64 = 1_764_000_000_000_000
        var checker = StreamChecker()
        var bigJumps = 0
        let peers: [[UInt8]] = (0..<3).map { [0, UInt8($0), 0x7F, 0xFF] }
        for _ in 0..<maxSteps where !input.isAtEnd {
            // Time only goes forward; now and then a jump past every timeout (a few per input, so that the
            // collector's one-hour memory of ended streams is never outlived within one input).
            var step = UInt64(input.byte()) * 2_000_000
            if input.byte() == 0xFF, bigJumps < 20 {
                step = 70_000_000_000
                bigJumps += 1
            }
            monotonic += step
            wall &+= Int64(step / 1000)
            let now = CollectorCore.Instant(monotonicNs: monotonic, wallUs: wall)
            let output: CollectorOutput
            switch input.below(6) {
            case 0: output = core.tick(at: now)
            case 1: output = core.malformed(code: "malformed", at: now)
            default:
                let envelope = HostileMessages.envelope(&input, wallNow: wall)
                output = core.handle(envelope, from: peers[input.below(peers.count)], peerAddress: "127.0.0.1", at: now)
            }
            precondition(
                output.publish.count <= maxPublishedPerStep,
                "one step published \(output.publish.count) messages (bound \(maxPublishedPerStep))")
            for message in output.publish {
                checker.check(message)
                switch message.body {
                case .frame(let frame): if frame.runLength > 1 { tally.runs += 1 } else { tally.frames += 1 }
                case .end: tally.ends += 1
                default: break
                }
            }
            tally.refusals += output.counts.filter { $0.name.contains("rejected") || $0.name.contains("refused") || $0.name == "invalid_stream" }.count
            let footprint = core.footprint
            // Open streams: the cap, plus a newer epoch replacing an open one (it opens before the old one ends).
            precondition(footprint.openStreams <= 2 * limits.maxStreams, "\(footprint.openStreams) open streams")
            precondition(footprint.captures <= limits.maxCaptures, "\(footprint.captures) capture nodes remembered")
            precondition(footprint.workers <= limits.maxWorkers, "\(footprint.workers) workers remembered")
            precondition(footprint.pendingResults <= footprint.openStreams * (limits.maxPending + 1), "\(footprint.pendingResults) results pending")
            precondition(footprint.storedSkipRuns <= footprint.openStreams * (limits.maxPending + 1), "\(footprint.storedSkipRuns) skip runs stored")
            precondition(footprint.pendingBytes <= limits.maxPendingBytes + (1 << 20) * footprint.openStreams, "\(footprint.pendingBytes) bytes pending")
            precondition(footprint.tracks <= footprint.openStreams * (tracking.maxTracks + maxFacesPerResult), "\(footprint.tracks) tracks")
            precondition(footprint.pulseTracks <= limits.maxPulseTracks, "\(footprint.pulseTracks) heart-rate estimators")
            precondition(footprint.metricStreams <= limits.maxMetricStreams + 1, "\(footprint.metricStreams) stream labels")
            precondition(footprint.endedRemembered <= CollectorCore.maxEndedRemembered(limits), "\(footprint.endedRemembered) ended streams remembered")
            checker.time = monotonic
        }
        return tally
    }

    /// Per step: every open stream may publish a bounded number of frames (expanded runs are at most `maxPending`
    /// long, results at most `maxPending` per stream), its events (bounded by faces per result and tracks), an end
    /// and statistics. A generous product of the caps; what matters is that it does not depend on the input's values.
    static var maxPublishedPerStep: Int {
        let perStream = 4 * (limits.maxPending + 2) * (CollectorCoreTarget.maxFacesPerResult + 4)
        return (limits.maxStreams + 2) * perStream
    }

    static let maxFacesPerResult = 256

    /// The stream invariants, from the published messages alone.
    struct StreamChecker {
        struct Key: Hashable {
            var stream: String
            var epoch: UInt64
        }

        /// The next sequence each (stream, epoch) must publish.
        var next: [Key: UInt64] = [:]
        /// Ended keys with the number of ends before theirs and the time they ended.
        var ended: [Key: (index: Int, time: UInt64)] = [:]
        var ends = 0
        var time: UInt64 = 0

        /// Whether the core may have forgotten that `key` ended (SPEC 9.6; REFERENCE-NODES.md §4.1: ended streams are remembered for an hour
        /// and at most 8 × `--max-streams`, the oldest forgotten first, down to half).
        func mayHaveForgotten(_ key: Key) -> Bool {
            guard let end = ended[key] else { return false }
            return ends - end.index > CollectorCore.maxEndedRemembered(limits) / 2 || time &- end.time >= 3_600_000_000_000
        }

        mutating func check(_ message: StreamMessage) {
            let key = Key(stream: message.stream, epoch: message.epoch)
            switch message.body {
            case .frame(let frame):
                if ended[key] != nil {
                    precondition(mayHaveForgotten(key), "a frame of \(key) after its end")
                    ended[key] = nil
                    next[key] = nil
                }
                precondition(frame.stream == message.stream && frame.epoch == message.epoch, "a frame under another key")
                let count = frame.status == .dropped && frame.runLength > 1 ? frame.runLength : 1
                if let expected = next[key] {
                    precondition(frame.seq == expected, "\(key): seq \(frame.seq) published where \(expected) was due")
                }
                let (after, overflow) = frame.seq.addingReportingOverflow(count)
                precondition(!overflow, "\(key): a run past the last sequence")
                next[key] = after
            case .end:
                precondition(ended[key] == nil || mayHaveForgotten(key), "\(key) ended twice")
                ended[key] = (ends, time)
                ends += 1
                next[key] = nil
            default:
                break
            }
        }
    }
}
