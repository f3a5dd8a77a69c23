import FacewireDetection
import FacewireImage
import Foundation
import Testing
import FacewireVocabulary
import FacewireEvaluation

/// One hand-labelled frame of `Fixtures/action-labels.jsonl` (see `action-labels.md`): the six mesh expressions,
/// a missing key meaning the labeller was unsure (not counted).
struct ActionLabel: Decodable {
    var clip: String
    var frame: Int
    var brow_raise: Bool?
    var brow_furrow: Bool?
    var mouth_open: Bool?
    var eye_widen: Bool?
    var lip_pucker: Bool?
    var lip_corner_depressor: Bool?

    func label(_ action: FacialAction) -> Bool? {
        switch action {
        case .browRaise: brow_raise
        case .browFurrow: brow_furrow
        case .mouthOpen: mouth_open
        case .eyeWiden: eye_widen
        case .lipPucker: lip_pucker
        case .lipCornerDepressor: lip_corner_depressor
        }
    }

    static func load() throws -> [ActionLabel] { try Fixtures.jsonLines("action-labels.jsonl") }
}

/// Issue 32: the six mesh expressions on our own 491 labelled frames, through the worker's path (JPEG, decode,
/// CenterFace, mesh, iris). The weights were fitted on each clip's even-numbered labelled frames
/// (`evaluation/expressions/mesh_expressions.py`); precision and recall are reported on the odd ones, held back.
/// Neighbouring frames of a clip look alike, so the held-back figures flatter; BENCHMARKS.md also gives
/// leave-one-clip-out figures.
@Suite("the mesh expressions on hand-labelled frames", .enabled(if: SharedData.available, SharedData.skipReason), .serialized)
struct ActionAccuracyTests {
    @Test(
        "mouth open reaches precision and recall 0.85 on held-back frames; the other five are measured and printed",
        .enabled(if: ExpressionAccuracyTests.meshInstalled, "needs the face-mesh models (scripts/setup.sh)"))
    func heldBackFrames() throws {
        let analyzer = try FrameAnalyzer(
            detector: try CenterFaceDetector(modelPath: SharedData.centerFaceModel),
            attributes: try makeAttributeMeasurer(AttributeConfiguration(method: .mesh)))
        var options = AnalysisOptions()
        options.classifiers = .actions
        let encoder = try JPEGEncoder()
        var counts: [FacialAction: (all: AttributeCounts, heldBack: AttributeCounts)] = [:]
        var withoutReading = 0
        for (clip, clipLabels) in Dictionary(grouping: try ActionLabel.load(), by: \.clip).sorted(by: { $0.key < $1.key }) {
            let frames = try VideoFrames.read(SharedData.path("video/" + clip), indices: Set(clipLabels.map(\.frame)))
            for (position, label) in clipLabels.sorted(by: { $0.frame < $1.frame }).enumerated() {
                let frame = try #require(frames[label.frame], "\(clip) has no frame \(label.frame)")
                let analysis = try analyzer.analyze(jpeg: try encoder.encode(frame, quality: 85), orientation: 1, options: options)
                let readings = analysis.faces.max { $0.confidence < $1.confidence }?.actions ?? []
                if readings.count != FacialAction.allCases.count { withoutReading += 1 }
                for action in FacialAction.allCases {
                    guard let truth = label.label(action) else { continue }
                    let predicted = readings.first { $0.action == action }?.present ?? false
                    counts[action, default: (AttributeCounts(), AttributeCounts())].all.add(predicted: predicted, actual: truth)
                    if position % 2 == 1 { counts[action]!.heldBack.add(predicted: predicted, actual: truth) }
                }
            }
        }
        for action in FacialAction.allCases {
            let (all, held) = counts[action] ?? (AttributeCounts(), AttributeCounts())
            print("expression \(action.name): held back \(held); all frames \(all)")
        }
        #expect(withoutReading <= 2, "\(withoutReading) frames without six readings")
        let mouth = try #require(counts[.mouthOpen]?.heldBack)
        #expect(mouth.precision >= 0.85 && mouth.recall >= 0.85, "mouth open: \(mouth)")
    }
}

typealias AttributeCounts = FacewireEvaluation.AttributeEvaluation.BinaryCounts
