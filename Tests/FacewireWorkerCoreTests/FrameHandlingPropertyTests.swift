import FacewireFuzzing
import FacewireVocabulary
import FacewireDetection
import FacewireProtocol
import Testing
import FacewireWorkerCore

/// Seeded random headers, every numeric field drawn from its extremes or at random, serialized and handled as wire
/// parts: the outcome always follows SPEC §11.6 (the oracle below restates the table of REFERENCE-NODES.md §3.3).
@Suite("Frame handling: random headers follow SPEC 11.6")
struct FrameHandlingPropertyTests {
    /// SplitMix64: deterministic, so a failure reproduces.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int64() -> Int64 {
            let extremes: [Int64] = [.min, .min + 1, -86_400_000_001, -1, 0, 1, 86_400_000_000, .max - 1, .max]
            switch next() % 3 {
            case 0: return extremes[Int(next() % UInt64(extremes.count))]
            case 1: return 1_700_000_000_000_000 &+ Int64(truncatingIfNeeded: next() % 200_000_000_000) &- 100_000_000_000
            default: return Int64(bitPattern: next())
            }
        }
        mutating func uint64() -> UInt64 { next() % 2 == 0 ? [0, 1, .max - 1, .max][Int(next() % 4)] : next() }
        mutating func uint32() -> UInt32 {
            next() % 2 == 0 ? [0, 1, 8, 9, 256, 257, 8192, 8193, 65_535, 65_536, .max][Int(next() % 11)] : UInt32(truncatingIfNeeded: next())
        }
        mutating func int32() -> Int { Int(Int32(truncatingIfNeeded: next() % 2 == 0 ? next() % 4 : next())) }
    }

    static func analyze(_ jpeg: [UInt8], _ orientation: Int, _ options: AnalysisOptions) throws -> FrameAnalysis {
        #expect((0...8).contains(orientation))
        #expect((1...AnalysisOptions.maxFacesLimit).contains(options.maxFaces))
        return FrameAnalysis(width: 10, height: 20, faces: [], decodeMilliseconds: 1, detectMilliseconds: 1)
    }

    @Test("20,000 random headers through the wire form", arguments: [UInt64(1), 2, 3, 4])
    func randomHeaders(seed: UInt64) throws {
        var random = Generator(state: seed)
        let handling = FrameHandling(workerID: "w")
        var statuses: [FrameStatus: Int] = [:]
        for _ in 0..<5000 {
            var header = FrameHeader()
            header.version = Wire.version
            header.stream = "s"
            header.epoch = random.uint64()
            header.seq = random.uint64()
            header.captureTimeUs = random.int64()
            header.sentTimeUs = random.int64()
            header.deadlineUs = random.int64()
            header.width = random.uint32()
            header.height = random.uint32()
            header.orientation = random.uint32()
            if random.next() % 2 == 0 {
                header.settings.minFace = random.uint32()
                header.settings.maxFaces = random.uint32()
                header.settings.accuracy = DetectionSettings.Accuracy(rawValue: random.int32()) ?? .unset
                header.settings.faceMode = DetectionSettings.FaceMode(rawValue: random.int32()) ?? .unset
                if random.next() % 2 == 0 { header.settings.classifiers = random.uint32() }
                header.settings.landmarks = DetectionSettings.Landmarks(rawValue: random.int32()) ?? .unset
            }
            let receivedAt = random.int64()
            let outcome = handling.handle(
                parts: [try header.serializedBytes(), [0xFF, 0xD8, 0xFF, 0xD9]], at: .wall(receivedAt), analyze: Self.analyze)
            // The header went through protobuf: compare with what the worker saw.
            let seen = try FrameHeader(serializedBytes: try header.serializedBytes() as [UInt8])
            let result = try #require(outcome.result)
            #expect(result.epoch == seen.epoch && result.seq == seen.seq && result.captureTimeUs == seen.captureTimeUs)
            #expect(result.timings.queueMs.isFinite && result.timings.queueMs >= 0 && result.timings.queueMs <= 86_400_000)

            let sent = seen.sentTimeUs != 0 ? seen.sentTimeUs : seen.captureTimeUs
            let (queued, overflow) = receivedAt.subtractingReportingOverflow(sent)
            let plausible = sent == 0 || (!overflow && queued >= 0 && queued <= 86_400_000_000)
            #expect(outcome.countedNames.contains("frames_implausible_time") == !plausible)
            let stale = seen.deadlineUs != 0 && receivedAt > seen.deadlineUs
            let settings = seen.settings
            let badSettings = seen.hasSettings && (
                settings.minFace > 65_535 || settings.maxFaces > 256
                    || ![DetectionSettings.Accuracy.unset, .low, .high].contains(settings.accuracy)
                    || ![DetectionSettings.FaceMode.unset, .small, .large].contains(settings.faceMode)
                    || ![DetectionSettings.Landmarks.unset, .none, .five, .mesh].contains(settings.landmarks)
                    || (settings.hasClassifiers && settings.classifiers & ~AnalysisOptions.Classifiers.all.rawValue != 0))
            if stale {
                #expect(result.status == .dropped && result.reason == "stale")
            } else if badSettings {
                #expect(result.status == .error && outcome.countedNames.contains("frames_failed_settings"), "\(seen)")
            } else if seen.orientation > 8 {
                #expect(result.status == .error && outcome.countedNames.contains("frames_failed_orientation"))
            } else {
                #expect(result.status == .processed, "\(seen) \(result.reason)")
                #expect(result.width == 10 && result.height == 20)
            }
            if result.status != .processed { #expect(result.width == seen.width && result.height == seen.height) }
            statuses[result.status, default: 0] += 1
        }
        // Every branch was taken.
        #expect(statuses[.processed, default: 0] > 100 && statuses[.dropped, default: 0] > 100 && statuses[.error, default: 0] > 100, "\(statuses)")
    }
}
