import FacewireDetection
import Foundation
import Testing
import FacewireEvaluation

/// The detector comparison behind BENCHMARKS.md "Detector choice". Slow (minutes): runs only with
/// `FACEWIRE_EVAL=1`, e.g. `FACEWIRE_EVAL=1 swift test --filter FacewireDetectionTests.EvaluationRun`.
@Suite("Detector evaluation on DEV", .serialized)
struct EvaluationRun {
    static let enabled = ProcessInfo.processInfo.environment["FACEWIRE_EVAL"] == "1" && SharedData.available

    @Test("AP@0.4, false positives on negatives and ms/image per backend", .enabled(if: enabled, "set FACEWIRE_EVAL=1 (needs ../shared/data)"))
    func compareBackends() throws {
        setOpenCVThreads(1)
        let clock = ContinuousClock()
        var start = clock.now
        let evaluator = try DetectorEvaluator(annotationFile: SharedData.root.appendingPathComponent("faces/dev.jsonl"))
        Self.log("loaded \(evaluator.images.count) images in \(clock.now - start)")
        let only = ProcessInfo.processInfo.environment["FACEWIRE_EVAL_ONLY"]
        // Each detector runs with a low threshold so AP sees the whole curve; the operating threshold is the default.
        let candidates: [(name: String, operating: Float, make: () throws -> any FaceDetector)] = [
            ("YuNet 320", YuNetDetector.defaultScoreThreshold, {
                try YuNetDetector(modelPath: SharedData.yunetModel, scoreThreshold: 0.3, inputWidth: 320, maxFaces: 500)
            }),
            ("YuNet 640", YuNetDetector.defaultScoreThreshold, {
                try YuNetDetector(modelPath: SharedData.yunetModel, scoreThreshold: 0.3, inputWidth: 640, maxFaces: 500)
            }),
            ("CenterFace 320", CenterFaceDetector.defaultScoreThreshold, {
                try CenterFaceDetector(modelPath: SharedData.centerFaceModel, scoreThreshold: 0.1, inputWidth: 320, maxFaces: 500)
            }),
            ("CenterFace 480", CenterFaceDetector.defaultScoreThreshold, {
                try CenterFaceDetector(modelPath: SharedData.centerFaceModel, scoreThreshold: 0.1, inputWidth: 480, maxFaces: 500)
            }),
            ("CenterFace 640", CenterFaceDetector.defaultScoreThreshold, {
                try CenterFaceDetector(modelPath: SharedData.centerFaceModel, scoreThreshold: 0.1, inputWidth: 640, maxFaces: 500)
            }),
            ("Haar cascade 320 (+eyes)", CascadeDetector.defaultScoreThreshold, {
                try CascadeDetector(scoreThreshold: 0, inputWidth: 320, maxFaces: 500)
            }),
            ("Haar cascade 640 (+eyes)", CascadeDetector.defaultScoreThreshold, {
                try CascadeDetector(scoreThreshold: 0, inputWidth: 640, maxFaces: 500)
            }),
        ]
        var reports: [EvaluationReport] = []
        for candidate in candidates where only.map({ candidate.name.lowercased().contains($0.lowercased()) }) ?? true {
            start = clock.now
            let report = try evaluator.evaluate(name: candidate.name, detector: try candidate.make(), operatingThreshold: candidate.operating)
            Self.log("\(EvaluationReport.markdownTable([report], sources: Self.sources).split(separator: "\n").last ?? "") in \(clock.now - start)")
            reports.append(report)
        }
        print("\n" + EvaluationReport.markdownTable(reports, sources: Self.sources) + "\n")
        #expect(!reports.isEmpty)
    }

    /// Progress goes to stderr: stdout is block-buffered when piped.
    static func log(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    static let sources = ["caltech_webfaces", "kaggle_face_mask_detection", "dlib_examples_faces"]
}
