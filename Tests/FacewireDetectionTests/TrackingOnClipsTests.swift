import FacewireVocabulary
import FacewireCollector
import FacewireDetection
import FacewireImage
import Foundation
import Testing
import FacewireTracking

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
    static func track(_ frames: [Frame], fps: Double, highScore: Float?, keep: (Int) -> Bool) -> (ids: Set<UInt64>, framesWithFace: Int) {
        var tracker = FaceTracker()
        var ids: Set<UInt64> = []
        var framesWithFace = 0
        for frame in frames where keep(frame.index) {
            let update = tracker.update(
                seq: UInt64(frame.index), time: Double(frame.index) / fps, detections: frame.detections, highScore: highScore)
            guard let best = frame.detections.indices.max(by: { frame.detections[$0].score < frame.detections[$1].score })
            else { continue }
            framesWithFace += 1
            ids.insert(update.assignments[best].trackingID)
        }
        return (ids, framesWithFace)
    }

    /// A detector as a worker runs it by default (its width following the frame, its own track-start score).
    static func detector(_ name: String, width: Int? = nil) throws -> any FaceDetector {
        name == "yunet"
            ? try YuNetDetector(modelPath: SharedData.yunetModel, inputWidth: width ?? YuNetDetector.defaultInputWidth, widthFollowsImage: width == nil)
            : try CenterFaceDetector(
                modelPath: SharedData.centerFaceModel, inputWidth: width ?? CenterFaceDetector.defaultInputWidth, widthFollowsImage: width == nil)
    }

    /// The detections of every frame of `path`, at the width a worker would use.
    static func frames(_ path: String, detector: any FaceDetector) throws -> [Frame] {
        var frames: [Frame] = []
        var failure: Error?
        try VideoFrames.read(path) { index, image in
            let picture = image()
            do {
                let faces = try detector.detect(picture, inputWidth: detector.inputWidth(forImageWidth: picture.width))
                frames.append(Frame(index: index, detections: faces.map {
                    TrackDetection(
                        box: FaceRect(x: $0.bounds.x, y: $0.bounds.y, width: $0.bounds.width, height: $0.bounds.height),
                        score: $0.confidence)
                }))
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return frames
    }

    @Test("one tracking ID per clip, with every frame and with 30% of frames dropped", arguments: ["yunet", "centerface"])
    func singleFaceClips(_ backend: String) throws {
        let detector = try Self.detector(backend)
        let clips = try Self.clips()
        #expect(clips.count >= 10, "expected the liveportrait clips, found \(clips.count)")
        var failures: [String] = []
        var lossyFailures: [String] = []
        for clip in clips {
            let path = SharedData.path("video/" + clip)
            let fps = try VideoFrames.framesPerSecond(path)
            let frames = try Self.frames(path, detector: detector)
            let all = Self.track(frames, fps: fps > 0 ? fps : 25, highScore: detector.trackScore) { _ in true }
            // 30% of the frames, chosen by a fixed hash of the index (reproducible, no pattern a tracker could use).
            let kept = Set(frames.map(\.index).filter { (((UInt64($0) &+ 1) &* 0x9E37_79B9_7F4A_7C15) >> 32) % 100 >= 30 })
            let lossy = Self.track(frames, fps: fps > 0 ? fps : 25, highScore: detector.trackScore) { kept.contains($0) }
            print("\(backend) \(clip): \(frames.count) frames, face in \(all.framesWithFace), IDs \(all.ids.sorted()); "
                  + "30% dropped: \(kept.count) kept, face in \(lossy.framesWithFace), IDs \(lossy.ids.sorted())")
            if all.ids.count != 1 || all.ids.contains(0) { failures.append("\(clip): IDs \(all.ids.sorted())") }
            if lossy.ids.count != 1 || lossy.ids.contains(0) { lossyFailures.append("\(clip) with 30% dropped: IDs \(lossy.ids.sorted())") }
            #expect(all.framesWithFace >= frames.count * 9 / 10, "\(clip): a face in only \(all.framesWithFace) of \(frames.count) frames")
        }
        #expect(failures.isEmpty, "\(failures)")
        // With 30 % of frames dropped, CenterFace's head in liveportrait_d12 moves 0.6 of its width in three frames:
        // the lone-jump step keeps its ID (before it, two IDs; a wider fast-motion radius for every track gave one ID
        // to two people in the crowd).
        #expect(lossyFailures.isEmpty, "\(lossyFailures)")
        print("\(backend): \(lossyFailures.count) clips with more than one ID at 30 % loss: \(lossyFailures)")
    }

    /// One labelled face of `Fixtures/crowd-tracks.jsonl` (see `crowd-tracks.md`).
    struct LabelledFace: Decodable {
        var box: [Float]
        var person: String?
    }

    struct LabelledFrame: Decodable {
        var frame: Int
        var faces: [LabelledFace]
    }

    /// Tracking figures on the labelled frames of the crowd clip.
    struct CrowdFigures: CustomStringConvertible {
        var labelled = 0, matched = 0, switches = 0, fragments = 0, sharedIDs = 0
        var description: String {
            "\(matched)/\(labelled) labelled faces tracked, \(switches) ID switches, \(fragments) fragments, "
                + "\(sharedIDs) IDs given to more than one person"
        }
    }

    static func crowdFigures(
        _ frames: [Frame], labels: [LabelledFrame], fps: Double, highScore: Float?, keep: (Int) -> Bool
    ) -> CrowdFigures {
        var tracker = FaceTracker()
        var idsByFrame: [Int: [(FaceRect, UInt64)]] = [:]
        for frame in frames where keep(frame.index) {
            let update = tracker.update(
                seq: UInt64(frame.index), time: Double(frame.index) / fps, detections: frame.detections, highScore: highScore)
            idsByFrame[frame.index] = zip(frame.detections, update.assignments).map { ($0.box, $1.trackingID) }
        }
        var figures = CrowdFigures()
        var sequence: [String: [UInt64]] = [:]
        var people: [UInt64: Set<String>] = [:]
        for label in labels.sorted(by: { $0.frame < $1.frame }) {
            guard let tracked = idsByFrame[label.frame] else { continue }  // a dropped frame
            var used = Set<Int>()
            for face in label.faces {
                guard let person = face.person, face.box.count == 4 else { continue }
                figures.labelled += 1
                let box = FaceRect(x: face.box[0], y: face.box[1], width: face.box[2], height: face.box[3])
                let best = tracked.indices.filter { !used.contains($0) && tracked[$0].1 != 0 }
                    .max { box.intersectionOverUnion(tracked[$0].0) < box.intersectionOverUnion(tracked[$1].0) }
                guard let best, box.intersectionOverUnion(tracked[best].0) >= 0.3 else { continue }
                used.insert(best)
                figures.matched += 1
                sequence[person, default: []].append(tracked[best].1)
                people[tracked[best].1, default: []].insert(person)
            }
        }
        for ids in sequence.values {
            figures.switches += zip(ids, ids.dropFirst()).filter { $0 != $1 }.count
            figures.fragments += Set(ids).count - 1
        }
        figures.sharedIDs = people.values.filter { $0.count > 1 }.count
        return figures
    }

    /// Issue 4: ID switches and fragmentation on the crowd clip against hand-labelled tracks (every 3rd frame, 11
    /// people), with every frame and with 30% of frames dropped before the tracker. The figures are printed for
    /// BENCHMARKS.md; the assertions hold the measured quality with some room.
    @Test("crowd clip: ID switches and fragmentation against the labelled tracks, with and without 30% loss")
    func crowdClip() throws {
        let labels = try Fixtures.jsonLines("crowd-tracks.jsonl", as: LabelledFrame.self)
        #expect(labels.count == 35)
        let path = SharedData.path("video/facenet_pytorch_video.mp4")
        let fps = try VideoFrames.framesPerSecond(path)
        // YuNet at 320 and at the labels' own width (640, where small faces are found), and the default detector
        // (CenterFace, its width following the 1920-wide frame: 480).
        var found: [String: Int] = [:]
        for (backend, width) in [("yunet", 320), ("yunet", 640), ("centerface", nil)] as [(String, Int?)] {
            let name = "\(backend) \(width.map(String.init) ?? "default")"
            let detector = try Self.detector(backend, width: width)
            let frames = try Self.frames(path, detector: detector)
            #expect(frames.count == 105)
            let all = Self.crowdFigures(frames, labels: labels, fps: fps, highScore: detector.trackScore) { _ in true }
            let kept = Set(frames.map(\.index).filter { (((UInt64($0) &+ 1) &* 0x9E37_79B9_7F4A_7C15) >> 32) % 100 >= 30 })
            let lossy = Self.crowdFigures(frames, labels: labels, fps: fps, highScore: detector.trackScore) { kept.contains($0) }
            // Faces at least 40 px tall and the share the tracker gives an ID (issue 32: ≥ 90 % for the default).
            var tracker = FaceTracker()
            var tall = 0, tallWithID = 0
            for frame in frames {
                let update = tracker.update(
                    seq: UInt64(frame.index), time: Double(frame.index) / fps, detections: frame.detections, highScore: detector.trackScore)
                for (detection, assignment) in zip(frame.detections, update.assignments) where detection.box.height >= 40 {
                    tall += 1
                    if assignment.trackingID != 0 { tallWithID += 1 }
                }
            }
            found[name] = frames.reduce(0) { $0 + $1.detections.count }
            print("crowd clip, \(name): \(found[name]!) faces, \(tallWithID) of \(tall) at least 40 px tall with an ID; every frame: \(all)")
            print("crowd clip, \(name), 30% of frames dropped: \(lossy)")
            #expect(all.labelled >= 200)
            // YuNet 320 misses the smaller labelled faces, the default (480 here) fewer, YuNet 640 fewest.
            #expect(Double(all.matched) >= (width == 320 ? 0.5 : width == nil ? 0.7 : 0.8) * Double(all.labelled), "\(name): \(all)")
            #expect(all.sharedIDs == 0 && lossy.sharedIDs == 0, "\(name): \(all); \(lossy)")
            #expect(all.switches <= 10 && lossy.switches <= 12, "\(name): \(all); \(lossy)")
            if width == nil {
                #expect(tallWithID * 10 >= tall * 9, "\(name): \(tallWithID) of \(tall) faces at least 40 px tall with an ID")
            }
        }
        #expect(found["centerface default"]! >= found["yunet 320"]!, "the default finds at least as many faces as YuNet 320: \(found)")
    }
}
