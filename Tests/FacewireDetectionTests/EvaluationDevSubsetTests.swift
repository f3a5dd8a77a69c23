import FacewireDetection
import Foundation
import Testing
import FacewireEvaluation

/// `facewire eval`'s library path on a slice of the real DEV set: quick enough for every run, unlike the full
/// `EvaluationRun`. Skipped without ../shared/data.
@Suite("Evaluation on a DEV subset", .serialized)
struct EvaluationDevSubsetTests {
    /// The first 40 Caltech images and every negative of DEV, decoded.
    static func subset() throws -> DetectorEvaluator {
        let all = try AnnotatedImage.loadJSONLines(contentsOf: SharedData.root.appendingPathComponent("faces/dev.jsonl"))
        let chosen = Array(all.filter { $0.source == "caltech_webfaces" }.prefix(40)) + all.filter(\.isNegative)
        let loader = try EvaluationImageLoader()
        let images = try chosen.map { try loader.load(SharedData.path("faces/" + $0.image)) }
        return DetectorEvaluator(annotations: chosen, images: images)
    }

    @Test("YuNet 320 on 40 Caltech images and the negatives: AP, buckets, eye error, dump", .enabled(if: SharedData.available, SharedData.skipReason))
    func yunetSubset() throws {
        setOpenCVThreads(1)
        let evaluator = try Self.subset()
        let detector = try YuNetDetector(modelPath: SharedData.yunetModel, scoreThreshold: 0.3)
        let timed = try YuNetDetector(modelPath: SharedData.yunetModel)
        let result = try evaluator.run(detector: detector, timedDetector: timed)
        #expect(result.faces.count == evaluator.annotations.count)
        #expect(result.milliseconds.count == evaluator.annotations.count)
        #expect(result.milliseconds.allSatisfy { $0 > 0 })

        let report = EvaluationReport.compute(
            name: "YuNet 320", annotations: evaluator.annotations, detections: result.faces,
            milliseconds: result.milliseconds, operatingThreshold: YuNetDetector.defaultScoreThreshold)
        // Whole DEV: AP 0.903 (BENCHMARKS.md); these Caltech images are among the easier ones.
        #expect(report.averagePrecision.value >= 0.85)
        #expect(report.recallAtOperatingThreshold >= 0.85)
        #expect(report.negativeImages == 17)
        // DEV README: YuNet fires on a few textures and the cat among the negatives, never on most of them.
        #expect(report.negativeImagesWithFalsePositives <= 6)
        let counted = evaluator.annotations.reduce(0) { $0 + $1.faces.filter { $0.box.height >= 20 }.count }
        #expect(report.recallByHeight.buckets.reduce(0) { $0 + $1.faces } == counted)
        // Caltech annotates both eyes of every face: most true positives have an eye error, and it is small.
        #expect(report.eyeError.count >= report.truePositivesAtOperatingThreshold * 9 / 10)
        #expect(report.eyeError.median < 0.25)

        // The dump holds every detection, one parseable line per image, in order.
        let lines = zip(evaluator.annotations, result.faces).map { DetectionDump.line(image: $0.image, faces: $1) }
        let first = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(first["image"] as? String == evaluator.annotations[0].image)
        #expect((first["faces"] as? [Any])?.count == result.faces[0].count)
    }
}
