import FacewireCollector
import FacewireDetection
import FacewireImage
import Foundation
import Testing

/// Acceptance (issue 4): the collector's tracker gives the face of each single-face clip
/// (`../shared/data/video/liveportrait_*.mp4`) exactly one tracking ID for the whole clip, with every frame and
/// with 30% of the frames randomly dropped before the tracker (as lost or dropped frames reach the collector).
///
/// Detections come from YuNet on every frame (the fastest backend; the tracker only sees boxes and scores), and
/// the tracker runs with the collector's defaults and each frame's time from the clip's frame rate. "The face" is
/// the most confident detection of each frame (some clips have background false positives, which may be tracked
/// separately).
@Suite("tracking IDs on the single-face clips", .enabled(if: SharedData.available, SharedData.skipReason), .serialized)
struct TrackingOnClipsTests {
    struct Frame {
        var index: Int
        var detections: [TrackDetection]
    }

    static func clips() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: SharedData.path("video"))
            .filter { $0.hasPrefix("liveportrait_") && $0.hasSuffix(".mp4") }.sorted()
    }

    /// The IDs the tracker gave the most confident face of each frame kept (ID 0 counted too), and how many
    /// frames had a face.
    static func track(_ frames: [Frame], fps: Double, keep: (Int) -> Bool) -> (ids: Set<UInt64>, framesWithFace: Int) {
        var tracker = FaceTracker()
        var ids: Set<UInt64> = []
        var framesWithFace = 0
        for frame in frames where keep(frame.index) {
            let update = tracker.update(seq: UInt64(frame.index), time: Double(frame.index) / fps, detections: frame.detections)
            guard let best = frame.detections.indices.max(by: { frame.detections[$0].score < frame.detections[$1].score })
            else { continue }
            framesWithFace += 1
            ids.insert(update.assignments[best].trackingID)
        }
        return (ids, framesWithFace)
    }

    @Test("one tracking ID per clip, with every frame and with 30% of frames dropped")
    func singleFaceClips() throws {
        let detector = try YuNetDetector(modelPath: SharedData.yunetModel)
        let clips = try Self.clips()
        #expect(clips.count >= 10, "expected the liveportrait clips, found \(clips.count)")
        var failures: [String] = []
        for clip in clips {
            let path = SharedData.path("video/" + clip)
            let fps = try VideoFrames.framesPerSecond(path)
            var frames: [Frame] = []
            var detectError: Error?
            try VideoFrames.read(path) { index, image in
                do {
                    let faces = try detector.detect(image())
                    frames.append(Frame(index: index, detections: faces.map {
                        TrackDetection(
                            box: TrackBox(x: $0.bounds.x, y: $0.bounds.y, width: $0.bounds.width, height: $0.bounds.height),
                            score: $0.confidence)
                    }))
                    return true
                } catch {
                    detectError = error
                    return false
                }
            }
            if let detectError { throw detectError }
            let all = Self.track(frames, fps: fps > 0 ? fps : 25) { _ in true }
            // 30% of the frames, chosen by a fixed hash of the index (reproducible, no pattern a tracker could use).
            let kept = Set(frames.map(\.index).filter { (((UInt64($0) &+ 1) &* 0x9E37_79B9_7F4A_7C15) >> 32) % 100 >= 30 })
            let lossy = Self.track(frames, fps: fps > 0 ? fps : 25) { kept.contains($0) }
            print("\(clip): \(frames.count) frames, face in \(all.framesWithFace), IDs \(all.ids.sorted()); "
                  + "30% dropped: \(kept.count) kept, face in \(lossy.framesWithFace), IDs \(lossy.ids.sorted())")
            if all.ids.count != 1 || all.ids.contains(0) { failures.append("\(clip): IDs \(all.ids.sorted())") }
            if lossy.ids.count != 1 || lossy.ids.contains(0) { failures.append("\(clip) with 30% dropped: IDs \(lossy.ids.sorted())") }
            #expect(all.framesWithFace >= frames.count * 9 / 10, "\(clip): a face in only \(all.framesWithFace) of \(frames.count) frames")
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
