import FacewireDetection
import FacewireImage
import Foundation
import Testing
import FacewireVocabulary
import FacewireEvaluation

/// One hand-labelled frame of `Fixtures/expression-labels.jsonl` (see `expression-labels.md`). A missing label
/// means the labeller was unsure, and that decision is not counted.
struct ExpressionLabel: Decodable {
    var clip: String
    var frame: Int
    var smile: Bool?
    var left_eye_closed: Bool?
    var right_eye_closed: Bool?

    static func load() throws -> [ExpressionLabel] { try Fixtures.jsonLines("expression-labels.jsonl") }
}

/// Acceptance: the smile and eyes-closed classifiers reach precision and recall of at least 0.8 on the 469
/// hand-labelled video frames, through the path a worker runs: the frame JPEG-encoded as a capture node sends
/// it (quality 85), decoded and analysed by ``FrameAnalyzer`` with the detector's own landmarks. The frames are
/// read from `../shared/data/video` (only the labels are in the repository).
@Suite("smile and eyes-closed on hand-labelled frames", .enabled(if: SharedData.available, SharedData.skipReason), .serialized)
struct ExpressionAccuracyTests {
    /// The analysed face of each labelled frame: the most confident one (s32 has background false positives).
    static func analyse(backend: String, method: AttributeConfiguration.Method) throws -> [(ExpressionLabel, DetectedFace?)] {
        let detector: any FaceDetector =
            backend == "YuNet"
            ? try YuNetDetector(modelPath: SharedData.yunetModel)
            : try CenterFaceDetector(modelPath: SharedData.centerFaceModel)
        let analyzer = try FrameAnalyzer(detector: detector, attributes: try makeAttributeMeasurer(AttributeConfiguration(method: method)))
        let encoder = try JPEGEncoder()
        let labels = try ExpressionLabel.load()
        var results: [(ExpressionLabel, DetectedFace?)] = []
        for (clip, clipLabels) in Dictionary(grouping: labels, by: \.clip).sorted(by: { $0.key < $1.key }) {
            let frames = try VideoFrames.read(SharedData.path("video/" + clip), indices: Set(clipLabels.map(\.frame)))
            for label in clipLabels.sorted(by: { $0.frame < $1.frame }) {
                let frame = try #require(frames[label.frame], "\(clip) has no frame \(label.frame)")
                let analysis = try analyzer.analyze(jpeg: try encoder.encode(frame, quality: 85), orientation: 1)
                results.append((label, analysis.faces.max { $0.confidence < $1.confidence }))
            }
        }
        return results
    }

    /// Whether the face-mesh models are installed (scripts/setup.sh installs them).
    static let meshInstalled = (try? AttributeConfiguration(method: .mesh).resolve()) != nil

    @Test("5 landmarks: precision and recall >= 0.8 for smile and each eye closed; winks read as one eye closed", arguments: ["CenterFace", "YuNet"])
    func labelledFrames(backend: String) throws {
        try check(backend: backend, method: .landmarks, smileMinimum: 0.8, eyesMinimum: 0.8)
    }

    @Test(
        "face mesh: eyes closed precision and recall >= 0.9, smile >= 0.85; winks read as one eye closed", .enabled(if: meshInstalled, "the face-mesh models are not installed: run scripts/setup.sh"),
        arguments: ["CenterFace", "YuNet"])
    func labelledFramesOnTheMesh(backend: String) throws {
        try check(backend: backend, method: .mesh, smileMinimum: 0.85, eyesMinimum: 0.9)
    }

    func check(backend: String, method: AttributeConfiguration.Method, smileMinimum: Double, eyesMinimum: Double) throws {
        let results = try Self.analyse(backend: backend, method: method)
        var smile = AttributeEvaluation.BinaryCounts(), eyes = AttributeEvaluation.BinaryCounts()
        var smileHalves = [AttributeEvaluation.BinaryCounts(), AttributeEvaluation.BinaryCounts()]
        var unclassified = 0
        var winks = 0, winksRead = 0
        for (index, (label, face)) in results.enumerated() {
            guard let face else { unclassified += 1; continue }
            let e = face.expression
            if let truth = label.smile {
                if e.smileScore == nil {
                    unclassified += 1
                } else {
                    smile.add(predicted: e.hasSmile, actual: truth)
                    smileHalves[index % 2].add(predicted: e.hasSmile, actual: truth)
                }
            }
            let predictedEyes = e.leftEyeClosedScore == nil ? nil : (e.leftEyeClosed, e.rightEyeClosed)
            for (truth, predicted) in [(label.left_eye_closed, predictedEyes?.0), (label.right_eye_closed, predictedEyes?.1)] {
                guard let truth else { continue }
                guard let predicted else { unclassified += 1; continue }
                eyes.add(predicted: predicted, actual: truth)
            }
            if let l = label.left_eye_closed, let r = label.right_eye_closed, l != r {
                winks += 1
                if predictedEyes?.0 == l, predictedEyes?.1 == r { winksRead += 1 }
            }
        }
        print("expressions \(backend), \(method.rawValue): \(results.count) frames; smile \(smile); eyes closed \(eyes); "
              + "smile even/odd frames \(smileHalves[0]) / \(smileHalves[1]); winks read \(winksRead)/\(winks); "
              + "decisions without a face or score \(unclassified)")
        #expect(results.count == 469)
        #expect(smile.total >= 350 && eyes.total >= 850, "too few decisions: smile \(smile.total), eyes \(eyes.total)")
        #expect(unclassified <= 10, "\(unclassified) labelled decisions got no answer")
        #expect(smile.precision >= smileMinimum && smile.recall >= smileMinimum, "smile \(smile)")
        #expect(eyes.precision >= eyesMinimum && eyes.recall >= eyesMinimum, "eyes closed \(eyes)")
        // The wink clip (d3; the manifest's d14 has no clean wink, see expression-labels.md): one eye closed while
        // the other is open, the right one.
        #expect(winks == 28)
        #expect(Double(winksRead) >= 0.9 * Double(winks), "winks read \(winksRead) of \(winks)")
    }
}
