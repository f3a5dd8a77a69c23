import Testing
@testable import FacewireCollector

@Suite("FaceTracker")
struct FaceTrackerTests {
    func box(_ x: Float, _ y: Float, size: Float = 50) -> TrackBox {
        TrackBox(x: x, y: y, width: size, height: size)
    }

    @Test func iouAndCentreDistance() {
        let a = box(0, 0)
        #expect(a.iou(a) == 1)
        #expect(a.iou(box(50, 0)) == 0)  // touching edges
        #expect(abs(a.iou(box(25, 0)) - 1.0 / 3.0) < 1e-6)
        #expect(a.iou(TrackBox(x: 0, y: 0, width: 0, height: 0)) == 0)
        #expect(a.centreDistance(to: box(3, 4)) == 5)
    }

    @Test func smoothlyMovingFaceKeepsItsIDAndCountsFrames() {
        var tracker = FaceTracker()
        let first = tracker.update(seq: 0, boxes: [box(0, 100)])
        #expect(first.assignments == [TrackAssignment(trackingID: 1, frameCount: 1)])
        #expect(first.appeared == [TrackEvent(trackingID: 1, seq: 0, frameCount: 1)])
        #expect(first.left.isEmpty)
        for seq: UInt64 in 1..<30 {
            let update = tracker.update(seq: seq, boxes: [box(Float(seq) * 8, 100 + Float(seq))])
            #expect(update.assignments == [TrackAssignment(trackingID: 1, frameCount: UInt32(seq) + 1)])
            #expect(update.appeared.isEmpty)
            #expect(update.left.isEmpty)
        }
        #expect(tracker.liveTrackIDs == [1])
    }

    @Test func twoFacesCrossingSlowlyKeepTheirIDs() {
        // A walks right on the upper row, B walks left slightly lower; they overlap in the
        // middle (IoU between them up to ~0.4) and end on each other's side.
        var tracker = FaceTracker()
        var idOfA: UInt64?
        var idOfB: UInt64?
        for seq: UInt64 in 0...20 {
            let a = box(Float(seq) * 10, 0)
            let b = box(200 - Float(seq) * 10, 20)
            // The detector's output order is arbitrary: alternate it.
            let swapped = seq % 2 == 1
            let update = tracker.update(seq: seq, boxes: swapped ? [b, a] : [a, b])
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
            #expect(update.assignments.allSatisfy { $0.frameCount == UInt32(seq) + 1 })
        }
        #expect(tracker.liveTrackCount == 2)
    }

    @Test func greedyMatchingPrefersTheHighestIoU() {
        var tracker = FaceTracker()
        _ = tracker.update(seq: 0, boxes: [box(0, 0), box(30, 0)])  // IDs 1, 2 (overlapping)
        // One box, closer to track 2: track 2 takes it; track 1 misses; no new track.
        let update = tracker.update(seq: 1, boxes: [box(28, 0)])
        #expect(update.assignments == [TrackAssignment(trackingID: 2, frameCount: 2)])
        #expect(update.appeared.isEmpty)
    }

    @Test func faceLeavingIsReportedAfterMaxMissedFrames() {
        var tracker = FaceTracker(maxMissedFrames: 10)
        for seq: UInt64 in 0..<5 {
            _ = tracker.update(seq: seq, boxes: [box(100, 100)])
        }
        // Missed in frames 5...14 (10 frames): still live.
        for seq: UInt64 in 5...14 {
            let update = tracker.update(seq: seq, boxes: [])
            #expect(update.left.isEmpty, "left too early at \(seq)")
        }
        #expect(tracker.liveTrackIDs == [1])
        // The 11th missed frame ends it, reporting the last frame it was seen in.
        let update = tracker.update(seq: 15, boxes: [])
        #expect(update.left == [TrackEvent(trackingID: 1, seq: 4, frameCount: 5)])
        #expect(tracker.liveTrackCount == 0)
        #expect(tracker.update(seq: 16, boxes: []).left.isEmpty)
    }

    @Test func faceBackWithinMaxMissedFramesKeepsItsID() {
        var tracker = FaceTracker(maxMissedFrames: 3)
        _ = tracker.update(seq: 0, boxes: [box(100, 100)])
        _ = tracker.update(seq: 1, boxes: [])
        _ = tracker.update(seq: 2, boxes: [])
        _ = tracker.update(seq: 3, boxes: [])
        let update = tracker.update(seq: 4, boxes: [box(102, 100)])
        #expect(update.assignments == [TrackAssignment(trackingID: 1, frameCount: 2)])
        #expect(update.appeared.isEmpty)
    }

    @Test func droppedFramesCountAsMissedButNoFaster() {
        var tracker = FaceTracker(maxMissedFrames: 3)
        _ = tracker.update(seq: 0, boxes: [box(0, 0)])
        #expect(tracker.skip(seq: 1).isEmpty)
        #expect(tracker.skip(seq: 2).isEmpty)
        #expect(tracker.update(seq: 3, boxes: []).left.isEmpty)
        #expect(tracker.skip(seq: 4) == [TrackEvent(trackingID: 1, seq: 0, frameCount: 1)])
    }

    @Test func droppedFramesDoNotEndATrackThatIsSeenAgain() {
        var tracker = FaceTracker(maxMissedFrames: 2)
        _ = tracker.update(seq: 0, boxes: [box(0, 0)])
        _ = tracker.skip(seq: 1)
        _ = tracker.skip(seq: 2)
        let update = tracker.update(seq: 3, boxes: [box(1, 0)])
        #expect(update.assignments == [TrackAssignment(trackingID: 1, frameCount: 2)])
        #expect(update.left.isEmpty)
    }

    @Test func aJumpInSequenceCountsTheFramesInBetweenAsMissed() {
        var tracker = FaceTracker(maxMissedFrames: 3)
        _ = tracker.update(seq: 0, boxes: [box(0, 0)])
        // Frames 1...4 never reported: 4 missed > 3, so the face at seq 5 is a new track.
        let update = tracker.update(seq: 5, boxes: [box(0, 0)])
        #expect(update.left == [TrackEvent(trackingID: 1, seq: 0, frameCount: 1)])
        #expect(update.assignments == [TrackAssignment(trackingID: 2, frameCount: 1)])
        #expect(update.appeared == [TrackEvent(trackingID: 2, seq: 5, frameCount: 1)])
    }

    @Test func newFaceGetsANewIDAndIDsAreNeverReused() {
        var tracker = FaceTracker(maxMissedFrames: 1)
        let u0 = tracker.update(seq: 0, boxes: [box(0, 0)])
        #expect(u0.assignments.map(\.trackingID) == [1])
        let u1 = tracker.update(seq: 1, boxes: [box(0, 0), box(300, 300)])
        #expect(u1.assignments.map(\.trackingID) == [1, 2])
        #expect(u1.appeared == [TrackEvent(trackingID: 2, seq: 1, frameCount: 1)])
        // Both leave...
        _ = tracker.update(seq: 2, boxes: [])
        let u3 = tracker.update(seq: 3, boxes: [])
        #expect(u3.left.map(\.trackingID) == [1, 2])
        // ...and come back at the same places: new IDs.
        let u4 = tracker.update(seq: 4, boxes: [box(300, 300), box(0, 0)])
        #expect(u4.assignments.map(\.trackingID) == [3, 4])
        #expect(u4.appeared.map(\.trackingID) == [3, 4])
        let finished = tracker.finish()
        #expect(finished.map(\.trackingID) == [3, 4])
        #expect(tracker.update(seq: 5, boxes: [box(0, 0)]).assignments.map(\.trackingID) == [5])
    }

    @Test func fastMotionFallsBackToCentreDistance() {
        var tracker = FaceTracker()
        _ = tracker.update(seq: 0, boxes: [box(100, 100, size: 100)])
        // Moved 35 px right and 30 px down: IoU ≈ 0.29 < 0.3, but the centre moved
        // sqrt(35² + 30²) ≈ 46 px, less than half the 100 px width.
        let diagonal = box(135, 130, size: 100)
        #expect(TrackBox(x: 100, y: 100, width: 100, height: 100).iou(diagonal) < 0.3)
        let update = tracker.update(seq: 1, boxes: [diagonal])
        #expect(update.assignments == [TrackAssignment(trackingID: 1, frameCount: 2)])
        // A face appearing further than half a width away is someone else.
        let far = tracker.update(seq: 2, boxes: [box(135 + 60, 130, size: 100)])
        #expect(far.assignments.map(\.trackingID) == [2])
    }

    @Test func fallbackCanBeDisabled() {
        var tracker = FaceTracker(centreFallbackFactor: 0)
        _ = tracker.update(seq: 0, boxes: [box(100, 100, size: 100)])
        let update = tracker.update(seq: 1, boxes: [box(135, 130, size: 100)])
        #expect(update.assignments.map(\.trackingID) == [2])
    }

    @Test func finishReportsEveryLiveTrack() {
        var tracker = FaceTracker()
        _ = tracker.update(seq: 7, boxes: [box(0, 0), box(200, 0)])
        _ = tracker.update(seq: 8, boxes: [box(2, 0)])
        #expect(tracker.finish() == [
            TrackEvent(trackingID: 1, seq: 8, frameCount: 2),
            TrackEvent(trackingID: 2, seq: 7, frameCount: 1),
        ])
        #expect(tracker.liveTrackCount == 0)
        #expect(tracker.finish().isEmpty)
    }
}
