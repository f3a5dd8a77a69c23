import FacewireDetection
import FacewireProtocol
import Testing
import FacewireVocabulary
import FacewireWorkerCore

/// ``FrameHandling`` driven without sockets, clocks or OpenCV: every numeric header field at its extremes gives a
/// defined outcome (processed, stale, error, malformed), never a trap.
@Suite("Frame handling: every header value gives a defined answer")
struct FrameHandlingTests {
    static let now: Int64 = 1_700_000_000_000_000
    static let int64Extremes: [Int64] = [.min, .min + 1, -1, 0, 1, .max - 1, .max]
    static let uint64Extremes: [UInt64] = [0, 1, .max - 1, .max]
    static let uint32Extremes: [UInt32] = [0, 1, 8192, 8193, .max]

    let handling = FrameHandling(workerID: "w/t0")

    static func header(_ change: (inout FrameHeader) -> Void = { _ in }) -> FrameHeader {
        var header = FrameHeader()
        header.version = Wire.version
        header.stream = "cam"
        header.epoch = 7
        header.seq = 3
        header.captureTimeUs = now - 20_000
        header.sentTimeUs = now - 10_000
        header.width = 640
        header.height = 480
        change(&header)
        return header
    }

    static func frame(_ change: (inout FrameHeader) -> Void = { _ in }) -> FrameMessage {
        FrameMessage(header: header(change), jpeg: [0xFF, 0xD8, 0xFF, 0xD9])
    }

    /// An analysis that finds one face in a 320 × 240 upright frame.
    static func analyze(_ jpeg: [UInt8], _ orientation: Int, _ options: AnalysisOptions) throws -> FrameAnalysis {
        FrameAnalysis(
            width: 320, height: 240,
            faces: [DetectedFace(bounds: FaceRect(x: 1, y: 2, width: 30, height: 40), confidence: 0.9)],
            decodeMilliseconds: 1.5, detectMilliseconds: 2.5)
    }

    @Test("a normal frame is processed with its timings and faces")
    func normal() throws {
        let outcome = handling.handle(Self.frame(), at: .wall(Self.now), analyze: Self.analyze)
        let result = try #require(outcome.result)
        #expect(result.status == .processed)
        #expect(result.stream == "cam" && result.epoch == 7 && result.seq == 3 && result.worker == "w/t0")
        #expect(result.width == 320 && result.height == 240)
        #expect(result.faces.count == 1)
        #expect(result.timings.queueMs == 10)
        #expect(result.timings.decodeMs == 1.5)
        #expect(outcome.countedNames == ["frames_processed"])
    }

    @Test("sent_time_us and capture_time_us at every int64 extreme: processed, queue time only when plausible",
          arguments: int64Extremes)
    func extremeTimes(value: Int64) throws {
        for receivedAt in [Self.now, 0, -1, Int64.min, Int64.max] {
            for change in [{ (h: inout FrameHeader) in h.sentTimeUs = value }, { h in h.sentTimeUs = 0; h.captureTimeUs = value }] {
                let frame = Self.frame(change)
                let outcome = handling.handle(frame, at: .wall(receivedAt), analyze: Self.analyze)
                let result = try #require(outcome.result)
                #expect(result.status == .processed)
                #expect(result.timings.queueMs >= 0 && result.timings.queueMs.isFinite)
                #expect(Float(result.timings.queueMs) <= Float(FrameHandling.maxPlausibleQueueUs) / 1000)
                let expected = FrameHandling.queueMicroseconds(
                    receivedAtUs: receivedAt, sentTimeUs: frame.header.sentTimeUs, captureTimeUs: frame.header.captureTimeUs)
                #expect(outcome.countedNames.contains("frames_implausible_time") == (expected == nil))
                #expect(FrameHandling.nanoseconds(milliseconds: result.timings.queueMs) >= 0)
            }
        }
    }

    @Test("queue time: absent times give 0, a negative or over-a-day one is implausible, overflow is caught")
    func queueRule() {
        #expect(FrameHandling.queueMicroseconds(receivedAtUs: Self.now, sentTimeUs: 0, captureTimeUs: 0) == 0)
        #expect(FrameHandling.queueMicroseconds(receivedAtUs: Self.now, sentTimeUs: Self.now - 5, captureTimeUs: 0) == 5)
        #expect(FrameHandling.queueMicroseconds(receivedAtUs: Self.now, sentTimeUs: 0, captureTimeUs: Self.now - 7) == 7)
        #expect(FrameHandling.queueMicroseconds(receivedAtUs: Self.now, sentTimeUs: Self.now + 1, captureTimeUs: 0) == nil)
        #expect(FrameHandling.queueMicroseconds(receivedAtUs: Self.now, sentTimeUs: Self.now - FrameHandling.maxPlausibleQueueUs, captureTimeUs: 0) == FrameHandling.maxPlausibleQueueUs)
        #expect(FrameHandling.queueMicroseconds(receivedAtUs: Self.now, sentTimeUs: Self.now - FrameHandling.maxPlausibleQueueUs - 1, captureTimeUs: 0) == nil)
        #expect(FrameHandling.queueMicroseconds(receivedAtUs: .max, sentTimeUs: .min, captureTimeUs: 0) == nil)
        #expect(FrameHandling.queueMicroseconds(receivedAtUs: .min, sentTimeUs: .max, captureTimeUs: 0) == nil)
    }

    @Test("deadline_us at every int64 extreme: 0 none, max never stale, negative always stale", arguments: int64Extremes)
    func extremeDeadline(deadline: Int64) throws {
        for receivedAt in [Self.now, 0, -1, Int64.min, Int64.max] {
            var analysed = false
            let outcome = handling.handle(Self.frame { $0.deadlineUs = deadline }, at: .wall(receivedAt)) { a, b, c in
                analysed = true
                return try Self.analyze(a, b, c)
            }
            let result = try #require(outcome.result)
            let stale = deadline != 0 && receivedAt > deadline
            #expect(result.status == (stale ? .dropped : .processed))
            #expect(analysed == !stale, "a stale frame is not decoded")
            if stale {
                #expect(result.reason == "stale")
                #expect(outcome.countedNames.contains("frames_stale"))
            }
        }
        if deadline == .max {
            #expect(handling.handle(Self.frame { $0.deadlineUs = deadline }, at: .wall(.max - 1), analyze: Self.analyze).result?.status == .processed)
        }
        if deadline < 0 {
            #expect(handling.handle(Self.frame { $0.deadlineUs = deadline }, at: .wall(0), analyze: Self.analyze).result?.status == .dropped)
        }
    }

    @Test("epoch and seq at 0 and 2^64−1 are echoed", arguments: uint64Extremes)
    func extremeEpochSeq(value: UInt64) throws {
        let result = try #require(handling.handle(Self.frame { $0.epoch = value; $0.seq = value }, at: .wall(Self.now), analyze: Self.analyze).result)
        #expect(result.status == .processed && result.epoch == value && result.seq == value)
    }

    @Test("width and height at their extremes: informational, noted, the JPEG's own size is reported", arguments: uint32Extremes)
    func extremeSize(value: UInt32) throws {
        let outcome = handling.handle(Self.frame { $0.width = value; $0.height = value }, at: .wall(Self.now), analyze: Self.analyze)
        let result = try #require(outcome.result)
        #expect(result.status == .processed && result.width == 320 && result.height == 240)
        #expect(outcome.countedNames.contains("frames_implausible_size") == (value == 0 || value > 8192))
        // A stale frame echoes the header's values, whatever they are.
        let stale = try #require(handling.handle(Self.frame { $0.width = value; $0.deadlineUs = -1 }, at: .wall(Self.now), analyze: Self.analyze).result)
        #expect(stale.status == .dropped && stale.width == value)
    }

    @Test("orientation outside 0...8 is an error without decoding", arguments: [UInt32(0), 1, 8, 9, 255, .max])
    func extremeOrientation(value: UInt32) throws {
        var seen: Int?
        let outcome = handling.handle(Self.frame { $0.orientation = value }, at: .wall(Self.now)) { a, orientation, c in
            seen = orientation
            return try Self.analyze(a, orientation, c)
        }
        let result = try #require(outcome.result)
        if value <= 8 {
            #expect(result.status == .processed && seen == Int(value))
        } else {
            #expect(result.status == .error && seen == nil)
            #expect(result.reason.contains("orientation"))
            #expect(outcome.countedNames == ["frames_failed", "frames_failed_orientation"])
        }
    }

    @Test("absurd settings are an error naming them, without decoding")
    func absurdSettings() throws {
        let cases: [(String, (inout DetectionSettings) -> Void)] = [
            ("max faces", { $0.maxFaces = .max }),
            ("max faces", { $0.maxFaces = 257 }),
            ("min face", { $0.minFace = .max }),
            ("min face", { $0.minFace = 65_536 }),
            ("accuracy", { $0.accuracy = .UNRECOGNIZED(Int.max) }),
            ("accuracy", { $0.accuracy = .UNRECOGNIZED(-1) }),
            ("face mode", { $0.faceMode = .UNRECOGNIZED(Int(Int32.min)) }),
            ("classifier", { $0.classifiers = .max }),
        ]
        for (name, change) in cases {
            var analysed = false
            let outcome = handling.handle(Self.frame { change(&$0.settings) }, at: .wall(Self.now)) { a, b, c in
                analysed = true
                return try Self.analyze(a, b, c)
            }
            let result = try #require(outcome.result)
            #expect(result.status == .error, "\(name)")
            #expect(result.reason.contains(name), "\(result.reason)")
            #expect(!analysed)
            #expect(outcome.countedNames == ["frames_failed", "frames_failed_settings"])
        }
        // The largest values that are valid are honoured.
        let valid = handling.handle(Self.frame { $0.settings.maxFaces = 256; $0.settings.minFace = 65_535 }, at: .wall(Self.now)) { _, _, options in
            #expect(options.maxFaces == 256 && options.minFace == 65_535)
            return try Self.analyze([], 0, options)
        }
        #expect(valid.result?.status == .processed)
    }

    @Test("every field at its extreme at once, in every combination of times: never a trap")
    func everythingAtOnce() throws {
        for time in Self.int64Extremes {
            for other in Self.uint64Extremes {
                for size in Self.uint32Extremes {
                    let frame = Self.frame {
                        $0.captureTimeUs = time
                        $0.sentTimeUs = time
                        $0.deadlineUs = time
                        $0.epoch = other
                        $0.seq = other
                        $0.width = size
                        $0.height = size
                        $0.orientation = size
                    }
                    for receivedAt in [Self.now, Int64.min, Int64.max] {
                        let result = try #require(handling.handle(frame, at: .wall(receivedAt), analyze: Self.analyze).result)
                        #expect([.processed, .dropped, .error].contains(result.status))
                    }
                }
            }
        }
    }

    @Test("an analysis that throws gives an error result; one with non-finite stage times gives 0")
    func analysisFailures() throws {
        struct Broken: Error {}
        let failed = handling.handle(Self.frame(), at: .wall(Self.now)) { _, _, _ in throw Broken() }
        #expect(failed.result?.status == .error)
        #expect(failed.countedNames == ["frames_failed", "frames_failed_image"])
        let odd = handling.handle(Self.frame(), at: .wall(Self.now)) { _, _, _ in
            FrameAnalysis(width: .max, height: -5, faces: [], decodeMilliseconds: .nan, detectMilliseconds: .infinity, classifyMilliseconds: -1)
        }
        let result = try #require(odd.result)
        #expect(result.width == .max && result.height == 0)
        #expect(result.timings.decodeMs == 0 && result.timings.detectMs == 0 && result.timings.classifyMs == 0)
        #expect(FrameHandling.nanoseconds(milliseconds: .infinity) == 0)
        #expect(FrameHandling.nanoseconds(milliseconds: .nan) == 0)
        #expect(FrameHandling.nanoseconds(milliseconds: .greatestFiniteMagnitude) == 0)
        #expect(FrameHandling.nanoseconds(milliseconds: 2) == 2_000_000)
    }

    @Test("malformed parts are not answered and are counted by their code")
    func malformed() throws {
        let good = try Self.header().serializedBytes() as [UInt8]
        var badStream = Self.header()
        badStream.stream = String(repeating: "x", count: 65)
        let cases: [([[UInt8]], String)] = [
            ([good], "frames_rejected_malformed"),
            ([good, [1], [1]], "frames_rejected_malformed"),
            ([good, []], "frames_rejected_malformed"),
            ([try badStream.serializedBytes(), [1]], "frames_rejected_invalidStream"),
            ([[UInt8](repeating: 0, count: 5000), [1]], "frames_rejected_tooLarge"),
        ]
        for (parts, counter) in cases {
            let outcome = handling.handle(parts: parts, at: .wall(Self.now), analyze: Self.analyze)
            #expect(outcome.result == nil)
            #expect(outcome.countedNames == ["frames_malformed", counter])
            #expect(outcome.rejection != nil)
        }
        let ok = handling.handle(parts: [good, [0xFF, 0xD8]], at: .wall(Self.now), analyze: Self.analyze)
        #expect(ok.countedNames == ["frames_received", "frames_processed"])
    }
}

extension Instant {
    /// A moment at wall-clock `us` microseconds (what frame handling reads).
    static func wall(_ us: Int64) -> Instant { Instant(monotonicNs: 0, wallUs: us) }
}
