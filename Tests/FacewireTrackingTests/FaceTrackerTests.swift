import FacewireFuzzing
import FacewireVocabulary
import Testing
@testable import FacewireTracking

@Suite("FaceTracker")
struct FaceTrackerTests {
    func box(_ x: Float, _ y: Float, size: Float = 50) -> FaceRect {
        FaceRect(x: x, y: y, width: size, height: size)
    }

    func faces(_ boxes: FaceRect..., score: Float = 0.9) -> [TrackDetection] {
        boxes.map { TrackDetection(box: $0, score: score) }
    }

    /// 30 frames per second.
    func t(_ seq: UInt64) -> Double { Double(seq) / 30 }

    @Test func iouAndCentreDistance() {
        let a = box(0, 0)
        #expect(a.intersectionOverUnion(a) == 1)
        #expect(a.intersectionOverUnion(box(50, 0)) == 0)  // touching edges
        #expect(abs(a.intersectionOverUnion(box(25, 0)) - 1.0 / 3.0) < 1e-6)
        #expect(a.intersectionOverUnion(FaceRect(x: 0, y: 0, width: 0, height: 0)) == 0)
        #expect(a.centreDistance(to: box(3, 4)) == 5)
    }

    @Test("the detector's own track-start score replaces the default; one not finite or outside 0...1 is ignored")
    func detectorTrackScore() {
        for (highScore, starts) in [(nil, false), (0.5, true), (0.6, false), (Float.nan, false), (-1, false), (2, false)] as [(Float?, Bool)] {
            var tracker = FaceTracker()
            let update = tracker.update(seq: 0, time: 0, detections: faces(box(0, 100), score: 0.55), highScore: highScore)
            #expect((update.assignments.first?.trackingID ?? 0 != 0) == starts, "\(String(describing: highScore))")
            // A track once started continues with whatever score (the low band continues tracks).
            if starts {
                let next = tracker.update(seq: 1, time: t(1), detections: faces(box(2, 100), score: 0.3), highScore: highScore)
                #expect(next.assignments.first?.trackingID == 1)
            }
        }
    }

    @Test func smoothlyMovingFaceKeepsItsIDAndCountsFrames() {
        var tracker = FaceTracker()
        let first = tracker.update(seq: 0, time: 0, detections: faces(box(0, 100)))
        #expect(first.assignments == [TrackAssignment(trackingID: 1, frameCount: 1)])
        #expect(first.appeared == [TrackEvent(trackingID: 1, seq: 0, frameCount: 1)])
        #expect(first.left.isEmpty)
        for seq: UInt64 in 1..<30 {
            let update = tracker.update(seq: seq, time: t(seq), detections: faces(box(Float(seq) * 8, 100 + Float(seq))))
            #expect(update.assignments == [TrackAssignment(trackingID: 1, frameCount: UInt32(seq) + 1)])
            #expect(update.appeared.isEmpty)
            #expect(update.left.isEmpty)
        }
        #expect(tracker.liveTrackIDs == [1])
    }

    @Test func twoFacesCrossingKeepTheirIDs() {
        // A walks right on the upper row, B walks left slightly lower; they overlap in the middle and end on each
        // other's side. Greedy matching on the last box swaps them when they overlap most; prediction does not.
        var tracker = FaceTracker()
        var idOfA: UInt64?
        var idOfB: UInt64?
        for seq: UInt64 in 0...20 {
            let a = box(Float(seq) * 10, 0)
            let b = box(200 - Float(seq) * 10, 20)
            // The detector's output order is arbitrary: alternate it.
            let swapped = seq % 2 == 1
            let update = tracker.update(seq: seq, time: t(seq), detections: swapped ? faces(b, a) : faces(a, b))
            let ids = update.assignments.map(\.trackingID)
            let (gotA, gotB) = swapped ? (ids[1], ids[0]) : (ids[0], ids[1])
            if seq == 0 {
                idOfA = gotA
                idOfB = gotB
                #expect(gotA != gotB)
                #expect(update.appeared.count == 2)
            } else {
                #expect(gotA == idOfA, "frame \(seq): A changed ID")
                #expect(gotB == idOfB, "frame \(seq): B changed ID")
                #expect(update.appeared.isEmpty)
            }
        }
        #expect(tracker.liveTrackCount == 2)
    }

    @Test func hungarianBeatsGreedyWhenTheBestPairIsATrap() {
        // Two tracks at rest, side by side: T1 = x 0...100, T2 = x 100...200. In the new frame D0 (x 45...145)
        // overlaps T1 most (IoU 0.379) and T2 less (0.290); D1 (x -50...50) overlaps only T1 (0.333). Greedy
        // matching gives D0 to T1 and leaves D1 without a track; the total-cost assignment matches both.
        var tracker = FaceTracker(configuration: .init(minIoU: 0.2, centreFallbackFactor: 0))
        _ = tracker.update(seq: 0, time: 0, detections: faces(box(0, 0, size: 100), box(100, 0, size: 100)))
        let update = tracker.update(seq: 1, time: t(1), detections: faces(box(45, 0, size: 100), box(-50, 0, size: 100)))
        #expect(update.assignments.map(\.trackingID) == [2, 1])
        #expect(update.appeared.isEmpty)
    }

    @Test func droppedFramesOnlyLengthenThePrediction() {
        // A face moving fast (15 px a frame on a 50 px box) is seen every 5th frame: 75 px apart, no overlap with
        // its last box, but the predicted box is where the face is.
        var tracker = FaceTracker(configuration: .init(centreFallbackFactor: 0))
        var ids: Set<UInt64> = []
        for seq in stride(from: UInt64(0), through: 60, by: 1) where seq < 10 || seq % 5 == 0 {
            let update = tracker.update(seq: seq, time: t(seq), detections: faces(box(Float(seq) * 15, 0)))
            ids.formUnion(update.assignments.map(\.trackingID))
        }
        #expect(ids == [1])
    }

    @Test func aFaceKeepsItsIDForMaxAgeSecondsThenLeaves() {
        var tracker = FaceTracker(configuration: .init(maxAge: 0.5))
        _ = tracker.update(seq: 0, time: 0, detections: faces(box(0, 0)))
        _ = tracker.update(seq: 1, time: t(1), detections: faces(box(1, 0)))
        // Gone for 0.4 s (12 frames at 30 fps), back: same ID.
        for seq: UInt64 in 2...13 {
            #expect(tracker.update(seq: seq, time: t(seq), detections: []).left.isEmpty)
        }
        let back = tracker.update(seq: 14, time: t(14), detections: faces(box(2, 0)))
        #expect(back.assignments == [TrackAssignment(trackingID: 1, frameCount: 3)])
        // Gone for longer than 0.5 s: left, reported with the last frame it was seen in.
        var left: [TrackEvent] = []
        for seq: UInt64 in 15...40 { left += tracker.update(seq: seq, time: t(seq), detections: []).left }
        #expect(left == [TrackEvent(trackingID: 1, seq: 14, frameCount: 3)])
        #expect(tracker.liveTrackCount == 0)
        // A face there again is a new face.
        let again = tracker.update(seq: 41, time: t(41), detections: faces(box(2, 0)))
        #expect(again.assignments == [TrackAssignment(trackingID: 2, frameCount: 1)])
        #expect(again.appeared == [TrackEvent(trackingID: 2, seq: 41, frameCount: 1)])
    }

    @Test func maxAgeIsCaptureTimeNotFrames() {
        // At 5 fps, 10 frames without the face are 2 s: past a 1 s max age although only 10 frames passed.
        var tracker = FaceTracker(configuration: .init(maxAge: 1))
        _ = tracker.update(seq: 0, time: 0, detections: faces(box(0, 0)))
        var left: [TrackEvent] = []
        for seq: UInt64 in 1...10 { left += tracker.update(seq: seq, time: Double(seq) / 5, detections: []).left }
        #expect(left.map(\.trackingID) == [1])
    }

    @Test func minHitsHoldsTheIDUntilTheFaceIsSeenEnoughTimes() {
        var tracker = FaceTracker(configuration: .init(minHits: 3))
        let one = tracker.update(seq: 0, time: 0, detections: faces(box(0, 0)))
        #expect(one.assignments == [TrackAssignment(trackingID: 0, frameCount: 1)])
        #expect(one.appeared.isEmpty)
        let two = tracker.update(seq: 1, time: t(1), detections: faces(box(1, 0)))
        #expect(two.assignments == [TrackAssignment(trackingID: 0, frameCount: 2)])
        let three = tracker.update(seq: 2, time: t(2), detections: faces(box(2, 0)))
        #expect(three.assignments == [TrackAssignment(trackingID: 1, frameCount: 3)])
        #expect(three.appeared == [TrackEvent(trackingID: 1, seq: 2, frameCount: 3)])
        // A one-frame false positive never gets an ID, and takes none from the sequence.
        let blip = tracker.update(seq: 3, time: t(3), detections: faces(box(3, 0), box(400, 400)))
        #expect(blip.assignments.map(\.trackingID) == [1, 0])
        _ = tracker.update(seq: 4, time: t(4), detections: faces(box(4, 0)))
        #expect(tracker.liveTrackIDs == [1])
        // The next real face gets ID 2.
        for seq: UInt64 in 5...7 { _ = tracker.update(seq: seq, time: t(seq), detections: faces(box(Float(seq), 0), box(300, 0))) }
        #expect(tracker.liveTrackIDs == [1, 2])
    }

    @Test func lowConfidenceDetectionsContinueTracksButNeverStartThem() {
        var tracker = FaceTracker(configuration: .init(highScore: 0.7))
        _ = tracker.update(seq: 0, time: 0, detections: faces(box(0, 0), score: 0.9))
        // The face turns away and its confidence drops: it keeps its ID.
        let dim = tracker.update(seq: 1, time: t(1), detections: faces(box(2, 0), score: 0.55))
        #expect(dim.assignments == [TrackAssignment(trackingID: 1, frameCount: 2)])
        // A low-confidence detection elsewhere starts nothing and is reported untracked.
        let stray = tracker.update(seq: 2, time: t(2), detections: faces(box(4, 0), score: 0.9) + faces(box(300, 300), score: 0.55))
        #expect(stray.assignments == [TrackAssignment(trackingID: 1, frameCount: 3), TrackAssignment(trackingID: 0, frameCount: 0)])
        #expect(stray.appeared.isEmpty)
        #expect(tracker.liveTrackIDs == [1])
    }

    @Test func fastMotionFallsBackToCentreDistance() {
        var tracker = FaceTracker()
        _ = tracker.update(seq: 0, time: 0, detections: faces(box(0, 0, size: 100)))
        // Jumped 45 px: IoU 0.38, matched by IoU. With IoU matching out of reach (minIoU 0.9), a jump of 30 px
        // right and 30 px down (centres 42 px apart, under half the 100 px width) is matched by centre distance.
        let near = tracker.update(seq: 1, time: t(1), detections: faces(box(45, 0, size: 100)))
        #expect(near.assignments.map(\.trackingID) == [1])
        var fallback = FaceTracker(configuration: .init(minIoU: 0.9))
        _ = fallback.update(seq: 0, time: 0, detections: faces(box(0, 0, size: 100)))
        let jump = fallback.update(seq: 1, time: t(1), detections: faces(box(30, 30, size: 100)))
        #expect(jump.assignments.map(\.trackingID) == [1])
        var none = FaceTracker(configuration: .init(minIoU: 0.9, centreFallbackFactor: 0, loneFallbackFactor: 0))
        _ = none.update(seq: 0, time: 0, detections: faces(box(0, 0, size: 100)))
        #expect(none.update(seq: 1, time: t(1), detections: faces(box(30, 30, size: 100))).assignments.map(\.trackingID) == [2])
    }

    /// A lone face that jumps further than the fast-motion radius while frames are lost (liveportrait_d12 at 30 %
    /// loss: 120 px in three frames, its face 199 px wide) keeps its ID; where the pairing is ambiguous (another
    /// face or another track that close) or the sizes disagree, the detection starts a new track as before.
    @Test func aLoneFaceThatJumpsKeepsItsIDOnlyWhenThePairingIsUnambiguous() {
        // Seen at rest for five frames, then missed for two, then 80 px right and 20 px down (centres 82 px apart:
        // IoU 0.15, outside half the 100 px width).
        func run(_ configuration: FaceTracker.Configuration = .init(), last: [TrackDetection], also: FaceRect? = nil) -> [UInt64] {
            var tracker = FaceTracker(configuration: configuration)
            for seq: UInt64 in 0..<5 {
                _ = tracker.update(seq: seq, time: t(seq), detections: faces(box(0, 0, size: 100)) + (also.map { faces($0) } ?? []))
            }
            return tracker.update(seq: 7, time: t(7), detections: last).assignments.map(\.trackingID)
        }
        #expect(run(last: faces(box(80, 20, size: 100))) == [1])
        // Off, it is a new face.
        #expect(run(.init(loneFallbackFactor: 0), last: faces(box(80, 20, size: 100))) == [2])
        // Twice the size (or half): another face.
        #expect(run(last: faces(FaceRect(x: 10, y: 20, width: 200, height: 200))) == [2])
        #expect(run(last: faces(FaceRect(x: 80, y: 20, width: 60, height: 60))) == [2])
        // Two faces near the track: which one it was is not known, so neither continues it.
        #expect(run(last: faces(box(80, 20, size: 100), box(-85, 10, size: 100))) == [2, 3])
        // Another track near the detection (a face 150 px to the right, still there): the jump is not taken.
        let neighbour = box(150, 0, size: 100)
        let ids = run(last: faces(box(80, 20, size: 100), neighbour), also: neighbour)
        #expect(ids[1] == 2 && ids[0] == 3, "\(ids)")
        // Too far (centres 150 px apart, beyond the whole width): a new face.
        #expect(run(last: faces(box(150, 0, size: 100))) == [2])
    }

    @Test func newFacesGetNewIDsAndIDsAreNeverReused() {
        var tracker = FaceTracker(configuration: .init(maxAge: 0.1))
        var seen: [UInt64] = []
        for round: UInt64 in 0..<5 {
            let seq = round * 10
            let update = tracker.update(seq: seq, time: t(seq), detections: faces(box(0, 0)))
            seen += update.assignments.map(\.trackingID)
            _ = tracker.update(seq: seq + 9, time: t(seq + 9), detections: [])  // 0.3 s later: gone
        }
        #expect(seen == [1, 2, 3, 4, 5])
        _ = tracker.update(seq: 100, time: t(100), detections: faces(box(0, 0)))
        #expect(tracker.finish() == [TrackEvent(trackingID: 6, seq: 100, frameCount: 1)])
        #expect(tracker.update(seq: 101, time: t(101), detections: faces(box(0, 0))).assignments.map(\.trackingID) == [7])
    }

    @Test func finishReportsEveryConfirmedTrackByID() {
        var tracker = FaceTracker(configuration: .init(minHits: 2))
        _ = tracker.update(seq: 0, time: 0, detections: faces(box(0, 0), box(200, 0)))
        _ = tracker.update(seq: 1, time: t(1), detections: faces(box(200, 0), box(0, 0), box(400, 0)))
        #expect(tracker.finish() == [TrackEvent(trackingID: 1, seq: 1, frameCount: 2), TrackEvent(trackingID: 2, seq: 1, frameCount: 2)])
        #expect(tracker.liveTrackCount == 0)
    }

    @Test("Hungarian assignment: minimum total cost, forbidden pairs never used", arguments: 0..<40 as Range<UInt64>)
    func assignmentMatchesBruteForce(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let rows = Int(random.next() % 5) + 1
        let columns = Int(random.next() % 5) + 1
        let cost: [Float?] = (0..<rows * columns).map { _ in
            random.next() % 4 == 0 ? nil : Float(random.next() % 100) / 100
        }
        let result = Assignment.solve(cost, rows: rows, columns: columns)
        // Each column at most once, never a forbidden pair.
        let used = result.compactMap { $0 }
        #expect(Set(used).count == used.count)
        for (row, column) in result.enumerated() { if let column { #expect(cost[row * columns + column] != nil) } }
        // Brute force: the best (most pairs, then lowest cost) over every partial assignment.
        func best(_ row: Int, _ taken: Set<Int>) -> (pairs: Int, cost: Float) {
            guard row < rows else { return (0, 0) }
            var answer = best(row + 1, taken)
            for column in 0..<columns where !taken.contains(column) {
                guard let c = cost[row * columns + column] else { continue }
                let rest = best(row + 1, taken.union([column]))
                let candidate = (rest.pairs + 1, rest.cost + c)
                if candidate.0 > answer.pairs || (candidate.0 == answer.pairs && candidate.1 < answer.cost - 1e-5) {
                    answer = candidate
                }
            }
            return answer
        }
        let optimum = best(0, [])
        let got = result.enumerated().compactMap { row, column in column.map { cost[row * columns + $0]! } }
        #expect(got.count == optimum.pairs, "cost \(cost) rows \(rows) columns \(columns): \(result)")
        #expect(abs(got.reduce(0, +) - optimum.cost) < 1e-4, "cost \(cost): \(result)")
    }

    @Test func tracksAreBoundedEvenWhenCaptureTimesRunBackwards() {
        var tracker = FaceTracker(configuration: .init(maxTracks: 8))
        var ended: [UInt64] = []
        var appeared = 0
        for frame in 0..<50 {
            // Every frame 4 new faces far from the others, and a capture time earlier than the last.
            let detections = (0..<4).map { index in
                TrackDetection(box: FaceRect(x: Float(frame * 4 + index) * 500, y: 0, width: 100, height: 100), score: 0.9)
            }
            let update = tracker.update(seq: UInt64(frame), time: 1000 - Double(frame), detections: detections)
            appeared += update.appeared.count
            ended += update.left.map(\.trackingID)
            #expect(tracker.liveTrackCount <= 8)
        }
        #expect(appeared == 200)
        #expect(ended.count == 200 - tracker.liveTrackCount, "every track that was cut ended with an event")
        #expect(Set(ended).count == ended.count)
    }
}
