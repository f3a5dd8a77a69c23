import FacewireFuzzing
import FacewireVocabulary
import FacewireProtocol
import Testing
import FacewireViewCore

/// ``ViewCore`` driven by hand: previews and results in every order, hostile values, bounds.
@Suite("View core: frames joined with their own results, bounded")
struct ViewCoreTests {
    static func preview(_ stream: String = "cam", seq: UInt64, epoch: UInt64 = 1, bytes: Int = 8) -> PreviewFrame {
        var header = FrameHeader()
        header.version = 1
        header.stream = stream
        header.epoch = epoch
        header.seq = seq
        header.width = 640
        header.height = 480
        header.orientation = 1
        // The JPEG's bytes carry the seq, so a test can tell which frame a joined pair holds.
        return PreviewFrame(header: header, jpeg: [0xFF, 0xD8] + withUnsafeBytes(of: seq.littleEndian, Array.init) + [UInt8](repeating: 0, count: max(0, bytes - 10)))
    }

    static func face(_ id: UInt64, x: Float = 10, size: Float = 50) -> WireFace {
        var face = WireFace()
        face.bounds.x = x
        face.bounds.y = 20
        face.bounds.width = size
        face.bounds.height = size
        face.trackingID = id
        face.landmarks = [Float](repeating: 1, count: 10)
        face.landmarkScheme = .five
        return face
    }

    static func result(_ stream: String = "cam", seq: UInt64, epoch: UInt64 = 1, status: FrameStatus = .processed, reason: String = "",
                       faces: [WireFace] = [], runLength: UInt64 = 0, captureTimeUs: Int64 = 0) -> StreamMessage {
        var result = FrameResult()
        result.stream = stream
        result.epoch = epoch
        result.seq = seq
        result.status = status
        result.reason = reason
        result.faces = faces
        result.runLength = runLength
        result.captureTimeUs = captureTimeUs
        return StreamMessage(stream: stream, epoch: epoch, body: .frame(result))
    }

    static func event(_ kind: FaceEvent.Kind, _ id: UInt64, seq: UInt64, frames: UInt32 = 1, stream: String = "cam") -> StreamMessage {
        var event = FaceEvent()
        event.kind = kind
        event.trackingID = id
        event.seq = seq
        event.trackingFrameCount = frames
        return StreamMessage(stream: stream, epoch: 1, body: .event(event))
    }

    /// Scores a face by its area, as the real scorer does in the main.
    static let area: @Sendable (WireFace) -> Float = { $0.bounds.width * $0.bounds.height }

    static func seqOfImage(_ frame: ViewCore.JoinedFrame) -> UInt64 {
        frame.preview.jpeg[2..<10].enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
    }

    @Test func aPreviewIsJoinedWithItsOwnResultWhicheverComesFirst() {
        var core = ViewCore(score: Self.area)
        #expect(core.preview(Self.preview(seq: 0), at: .ms(0)).joined.isEmpty)
        let first = core.receive(Self.result(seq: 0, faces: [Self.face(1)]), at: .ms(0)).joined
        #expect(first.map(\.result.seq) == [0] && first.map(Self.seqOfImage) == [0])
        #expect(core.receive(Self.result(seq: 1, faces: [Self.face(1, x: 30)]), at: .ms(0)).joined.isEmpty)
        let second = core.preview(Self.preview(seq: 1), at: .ms(0)).joined
        #expect(second.map(\.result.seq) == [1] && second.map(Self.seqOfImage) == [1])
        #expect(second.first?.result.faces.first?.bounds.x == 30, "the face of seq 1, not of seq 0")
        #expect(second.first?.result.faces.first?.landmarks.isEmpty == true, "landmarks are not kept")
        #expect(core.latest("cam").map(Self.seqOfImage) == 1)
        // Fields this view does not know are not kept either (a result may carry up to 1 MiB of them).
        var padded = FrameResult()
        padded.stream = "cam"
        padded.epoch = 1
        padded.seq = 2
        padded.faces = [Self.face(1)]
        var bytes: [UInt8] = try! padded.serializedBytes()
        bytes += [0xFA, 0x3E] + [0x80, 0x80, 0x40] + [UInt8](repeating: 7, count: 1 << 20)  // field 999, 1 MiB
        let parsed = try! FrameResult(serializedBytes: bytes)
        #expect(parsed.unknownFields.data.count > 1 << 20, "the padding is there to be dropped")
        _ = core.preview(Self.preview(seq: 2), at: .ms(0))
        let kept = core.receive(StreamMessage(stream: "cam", epoch: 1, body: .frame(parsed)), at: .ms(0)).joined.first?.result
        #expect(kept?.seq == 2 && kept?.unknownFields.data.isEmpty == true)
    }

    @Test func aFrameWhoseResultWasDroppedIsNeverShownWithANeighboursResult() {
        var core = ViewCore(score: Self.area)
        for seq: UInt64 in 0..<3 { _ = core.preview(Self.preview(seq: seq), at: .ms(0)) }
        var joined: [ViewCore.JoinedFrame] = []
        joined += core.receive(Self.result(seq: 0), at: .ms(0)).joined
        let drop = core.receive(Self.result(seq: 1, status: .dropped, reason: "timeout:1000ms"), at: .ms(5))
        #expect(drop.joined.isEmpty && drop.countedNames == ["view_previews_unjoined"])
        joined += core.receive(Self.result(seq: 2), at: .ms(0)).joined
        #expect(joined.map(\.result.seq) == [0, 2])
        #expect(joined.map(Self.seqOfImage) == [0, 2])
        // A preview that comes after its frame was published as dropped finds nothing to join.
        #expect(core.preview(Self.preview(seq: 1), at: .ms(0)).countedNames == ["view_previews_unjoined"])
        let status = core.status("cam")
        #expect(status?.dropped == ["timeout": 1] && status?.lastDrop?.seq == 1)
        #expect(status?.lastDrop?.reason == "timeout" && status?.lastDrop?.atMs == 5)
        #expect(status?.frames == 3 && status?.processed == 2 && status?.joined == 2 && status?.previews == 4)
    }

    /// Previews at a tenth of the rate, each arriving some frames early or late against the ordered results, over a
    /// thousand frames with a third dropped: every pair has one seq, and every previewed processed frame within the
    /// rings' reach is shown exactly once.
    @Test func shuffledArrivalsJoinOnlyEqualSequences() {
        var random = SplitMix64(seed: 42)
        var core = ViewCore(score: Self.area)
        var joined: [ViewCore.JoinedFrame] = []
        var processed: Set<UInt64> = []
        var previewAt: [Int: [UInt64]] = [:]  // results index -> previews delivered just before it
        for seq in stride(from: UInt64(0), to: 1000, by: 10) {
            let lag = Int(random.next() % 21) - 10  // -10...10 frames early or late
            previewAt[max(0, Int(seq) + lag), default: []].append(seq)
        }
        for index in 0..<1010 {
            for seq in previewAt[index] ?? [] { joined += core.preview(Self.preview(seq: seq), at: .ms(0)).joined }
            guard index < 1000 else { continue }
            let seq = UInt64(index)
            let dropped = random.next() % 3 == 0
            if !dropped { processed.insert(seq) }
            joined += core.receive(Self.result(seq: seq, status: dropped ? .dropped : .processed, faces: [Self.face(seq + 1)]), at: .ms(0)).joined
        }
        #expect(joined.allSatisfy { $0.result.seq == $0.preview.header.seq && Self.seqOfImage($0) == $0.result.seq })
        #expect(joined.allSatisfy { $0.result.faces.first?.trackingID == $0.result.seq + 1 }, "each frame drawn with its own faces")
        let expected = Set(stride(from: UInt64(0), to: 1000, by: 10)).intersection(processed)
        #expect(Set(joined.map(\.result.seq)) == expected)
        #expect(joined.count == expected.count, "no frame shown twice")
    }

    @Test func aNewerEpochStartsTheStreamAfreshAndAnOlderOneIsIgnored() {
        var core = ViewCore(score: Self.area)
        _ = core.receive(Self.result(seq: 5), at: .ms(0))
        #expect(core.status("cam")?.frames == 1)
        _ = core.preview(Self.preview(seq: 0, epoch: 2), at: .ms(0))
        #expect(core.status("cam")?.epoch == 2 && core.status("cam")?.frames == 0)
        #expect(core.receive(Self.result(seq: 6), at: .ms(0)).countedNames == ["view_stale_epoch"])
        #expect(core.receive(Self.result(seq: 0, epoch: 2), at: .ms(0)).joined.count == 1)
    }

    // MARK: Tracks

    @Test func eachTrackKeepsItsBestPictureAndLeavesWithItsDurationAndFrameCount() {
        var core = ViewCore(score: Self.area)
        var crops: [ViewCore.CropRequest] = []
        for (seq, size) in [(0, 40), (1, 42), (2, 80), (3, 60)] as [(UInt64, Float)] {
            _ = core.preview(Self.preview(seq: seq), at: .ms(0))
            let out = core.receive(Self.result(seq: seq, faces: [Self.face(7, size: size)], captureTimeUs: Int64(seq) * 40_000), at: .ms(0))
            crops += out.crops
        }
        // 40 first, then 42 is not 15 % better, 80 is, 60 is worse.
        #expect(crops.map(\.face.bounds.width) == [40, 80])
        #expect(crops.allSatisfy { $0.trackingID == 7 && $0.stream == "cam" && $0.epoch == 1 })
        #expect(crops.last.map { Array($0.jpeg[2..<3]) } == [2], "the crop is of the frame the face was best in")
        core.setCrop([1, 2, 3], stream: "cam", epoch: 1, trackingID: 7)
        let out = core.receive(Self.event(.left, 7, seq: 3, frames: 4), at: .ms(99))
        #expect(out.left.count == 1)
        #expect(out.left.first?.track.durationMs == 120 && out.left.first?.track.frameCount == 4)
        let event = out.events.first
        #expect(out.events.count == 1 && event?.kind == "left" && event?.stream == "cam" && event?.trackingID == 7 && event?.seq == 3)
        #expect(event?.frames == 4 && event?.durationMs == 120 && event?.atMs == 99 && event?.hasPicture == true)
        #expect(core.crop("cam", trackingID: 7) == [1, 2, 3], "an ended track's picture is still served")
        #expect(core.state().events.count == 1)
    }

    @Test func tracksAndEventsAreBounded() {
        var limits = ViewLimits()
        limits.liveTracksPerStream = 4
        limits.eventsPerStream = 3
        limits.endedTracksPerStream = 2
        var core = ViewCore(limits: limits, score: Self.area)
        let faces = (1...10).map { Self.face(UInt64($0)) }
        let out = core.receive(Self.result(seq: 0, faces: faces), at: .ms(0))
        #expect(out.countedNames.filter { $0 == "view_tracks_refused_cap" }.count == 6)
        #expect(core.status("cam")?.liveTracks == 4)
        for id: UInt64 in 1...4 { _ = core.receive(Self.event(.left, id, seq: 0), at: .ms(Int64(id))) }
        #expect(core.state().events.map(\.trackingID) == [2, 3, 4])
        #expect(core.track("cam", trackingID: 1) == nil && core.track("cam", trackingID: 4)?.ended == true)
    }

    // MARK: Hostile values

    @Test func streamsPreviewsAndRingsAreBounded() {
        var limits = ViewLimits()
        limits.maxStreams = 2
        limits.framesPerStream = 4
        limits.maxJPEGBytes = 100
        var core = ViewCore(limits: limits, score: Self.area)
        var counters: [String] = []
        for seq: UInt64 in 0..<1000 { counters += core.preview(Self.preview(seq: seq), at: .ms(0)).countedNames }
        #expect(counters.count == 996, "previews without a result: all but the newest 4 go")
        #expect(core.receive(Self.result(seq: 999), at: .ms(0)).joined.count == 1, "the newest one is still joinable")
        _ = core.receive(Self.result("b", seq: 0), at: .ms(0))
        #expect(core.receive(Self.result("c", seq: 0), at: .ms(0)).countedNames == ["view_streams_refused_cap"])
        #expect(core.preview(Self.preview("b", seq: 1, bytes: 101), at: .ms(0)).countedNames == ["view_previews_rejected_size"])
        #expect(core.receive(Self.result("bad stream", seq: 0), at: .ms(0)).countedNames == ["view_invalid_stream"])
        #expect(core.streamIDs == ["b", "cam"])
    }

    /// Previews of the largest size allowed, from several capture nodes, never add up past the byte budget: the
    /// arriving stream's oldest waiting frames go first, and a frame that alone does not fit is refused.
    @Test func waitingPreviewsStayWithinTheByteBudget() {
        var limits = ViewLimits()
        limits.maxPendingPreviewBytes = 100
        limits.maxJPEGBytes = 100
        var core = ViewCore(limits: limits, score: Self.area)
        var counters: [String] = []
        for seq: UInt64 in 0..<3 { counters += core.preview(Self.preview("a", seq: seq, bytes: 40), at: .ms(0)).countedNames }
        #expect(counters == ["view_previews_over_budget"], "80 bytes wait, the third frame pushes out the first")
        #expect(core.receive(Self.result("a", seq: 0), at: .ms(0)).joined.isEmpty, "seq 0 went")
        #expect(core.receive(Self.result("a", seq: 2), at: .ms(0)).joined.map(\.result.seq) == [2])
        // "a" still holds nothing now; "b" fills 80, then "c" cannot fit a 40-byte frame beside them.
        for seq: UInt64 in 0..<2 { _ = core.preview(Self.preview("b", seq: seq, bytes: 40), at: .ms(0)) }
        #expect(core.preview(Self.preview("c", seq: 0, bytes: 40), at: .ms(0)).countedNames == ["view_previews_over_budget"])
        #expect(core.receive(Self.result("c", seq: 0), at: .ms(0)).joined.isEmpty)
        #expect(core.receive(Self.result("b", seq: 1), at: .ms(0)).joined.count == 1, "b's frames were not pushed out by c")
        // A newer epoch's frames do not compete with the older epoch's.
        _ = core.preview(Self.preview("b", seq: 5, bytes: 40), at: .ms(0))
        #expect(core.preview(Self.preview("b", seq: 0, epoch: 2, bytes: 70), at: .ms(0)).countedNames.isEmpty)
    }

    @Test func anEndedOrSilentStreamMakesRoomForANewOneAtTheCap() {
        var limits = ViewLimits()
        limits.maxStreams = 2
        var core = ViewCore(limits: limits, score: Self.area)
        _ = core.receive(Self.result("a", seq: 0), at: .ms(0))
        _ = core.receive(Self.result("b", seq: 0), at: .ms(1000))
        #expect(core.receive(Self.result("c", seq: 0), at: .ms(30_000)).countedNames == ["view_streams_refused_cap"], "both still live")
        _ = core.receive(StreamMessage(stream: "b", epoch: 1, body: .end(StreamSummary())), at: .ms(31_000))
        #expect(core.receive(Self.result("c", seq: 0), at: .ms(32_000)).countedNames == ["view_streams_forgotten"], "the ended one goes")
        #expect(core.streamIDs == ["a", "c"])
        #expect(core.receive(Self.result("d", seq: 0), at: .ms(61_000)).countedNames == ["view_streams_forgotten"], "a is silent for 61 s")
        #expect(core.streamIDs == ["c", "d"])
    }

    @Test func dropReasonsAreShortCodesAndFewRunsCountTheirLength() {
        var core = ViewCore(score: Self.area)
        _ = core.receive(Self.result(seq: 0, status: .dropped, reason: "skipped:no-worker", runLength: UInt64.max), at: .ms(0))
        _ = core.receive(Self.result(seq: 1, status: .dropped, reason: "skipped:no-worker", runLength: 5), at: .ms(0))
        for n in 0..<100 { _ = core.receive(Self.result(seq: 2 + UInt64(n), status: .dropped, reason: "r\(n)\u{7}:\(String(repeating: "x", count: 500))"), at: .ms(0)) }
        let status = core.status("cam")
        #expect(status?.dropped["skipped"] == .max, "saturates, never traps")
        #expect(status?.frames == .max)
        #expect(status?.dropped.count == 32, "distinct reasons are capped")
        #expect(status?.dropped["other"] == 70)
        #expect(status?.dropped.keys.allSatisfy { $0.utf8.count <= 32 && !$0.contains("\u{7}") } == true)
    }

    /// Twenty thousand hostile inputs (extreme seqs, epochs, run lengths and IDs, non-finite faces, invalid and
    /// many streams, previews and results in any order): nothing traps and every bound holds after each step.
    @Test func hostileSequencesKeepEveryBound() {
        var random = SplitMix64(seed: 7)
        var limits = ViewLimits()
        limits.maxStreams = 3
        limits.liveTracksPerStream = 5
        limits.eventsPerStream = 4
        limits.endedTracksPerStream = 3
        var core = ViewCore(limits: limits, score: { $0.bounds.width })
        let extremes: [UInt64] = [0, 1, 2, 3, .max, .max - 1, 1 << 63]
        func pick() -> UInt64 { random.next() % 3 == 0 ? extremes[Int(random.next() % UInt64(extremes.count))] : random.next() % 16 }
        let streams = ["a", "b", "c", "d", "e", "", "bad id", String(repeating: "x", count: 65)]
        var joined = 0
        for step in 0..<20_000 {
            let stream = streams[Int(random.next() % UInt64(streams.count))]
            var face = Self.face(pick(), x: [1, .nan, .infinity, -1e30][Int(random.next() % 4)], size: [10, .nan, 0, 1e38][Int(random.next() % 4)])
            face.faceAngle = [0, .nan, 1e9][Int(random.next() % 3)]
            let out: ViewOutput
            switch random.next() % 4 {
            case 0: out = core.preview(Self.preview(stream, seq: pick(), epoch: pick()), at: .ms(Int64(step)))
            case 1:
                let status: FrameStatus = [.processed, .dropped, .error, .UNRECOGNIZED(9)][Int(random.next() % 4)]
                out = core.receive(Self.result(stream, seq: pick(), epoch: pick(), status: status, reason: "r\(random.next() % 50)",
                                               faces: [face, face], runLength: pick(), captureTimeUs: Int64(bitPattern: random.next())), at: .ms(0))
            case 2:
                var message = Self.event(random.next() % 2 == 0 ? .appeared : .left, pick(), seq: pick(), frames: UInt32(truncatingIfNeeded: pick()), stream: stream)
                message.epoch = pick()
                out = core.receive(message, at: .ms(Int64(step)))
            default:
                var statistics = StreamStatisticsMessage()
                statistics.fps = .nan
                statistics.latencyP99Ms = .infinity
                out = core.receive(StreamMessage(stream: stream, epoch: pick(), body: .statistics(statistics)), at: .ms(0))
            }
            joined += out.joined.count
            #expect(out.joined.allSatisfy { $0.preview.header.seq == $0.result.seq && $0.preview.header.epoch == $0.result.epoch })
            let state = core.state()
            guard state.streams.count <= 3, state.events.count <= 4,
                  state.streams.allSatisfy({ $0.liveTracks <= 5 && $0.dropped.count <= 32 && $0.window?.fps.isFinite != false })
            else {
                Issue.record("a bound broke at step \(step): \(state)")
                return
            }
        }
        #expect(joined > 0, "some pairs did join")
    }

    @Test func nonFiniteFaceValuesNeverReachThePage() {
        var face = Self.face(1)
        face.bounds.x = .nan
        #expect(PageModel.Face(face) == nil)
        face.bounds.x = 1
        face.faceAngle = .infinity
        face.leftEye.x = -.infinity
        let page = PageModel.Face(face)
        #expect(page != nil && page?.roll == nil && page?.leftEye == nil)
    }
}


extension Instant {
    /// A moment at wall-clock `ms` milliseconds (the view keeps wall-clock time).
    static func ms(_ ms: Int64) -> Instant { Instant(monotonicNs: 0, wallUs: ms * 1000) }
}
