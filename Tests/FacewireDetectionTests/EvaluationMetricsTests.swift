import FacewireDetection
import Foundation
import Testing
import FacewireVocabulary
import FacewireEvaluation

/// Hand-computed expectations for the pure evaluation metrics behind `facewire eval`.
@Suite("Evaluation metrics")
struct EvaluationMetricsTests {
    private func box(_ x: Float, height: Float = 40) -> FaceRect {
        FaceRect(x: x, y: 0, width: 40, height: height)
    }

    private func face(
        _ x: Float, _ score: Float, height: Float = 40, leftEye: FacePoint? = nil, rightEye: FacePoint? = nil
    ) -> DetectedFace {
        DetectedFace(bounds: box(x, height: height), leftEye: leftEye, rightEye: rightEye, confidence: score)
    }

    private func truth(
        _ x: Float, height: Float = 40, leftEye: FacePoint? = nil, rightEye: FacePoint? = nil
    ) -> GroundTruthFace {
        GroundTruthFace(box: box(x, height: height), leftEye: leftEye, rightEye: rightEye)
    }

    private func image(_ name: String, source: String = "s", faces: [GroundTruthFace]) -> AnnotatedImage {
        AnnotatedImage(image: name, width: 640, height: 480, source: source, faces: faces)
    }

    // MARK: - Matching

    @Test("a detection prefers a counted face over an ignored one; one on an ignored face only is ignored")
    func matchingIgnoredFaces() {
        let criteria = MatchingCriteria(iouThreshold: 0.4, minimumFaceHeight: 20)
        // Face 0 is 40 px tall (counted), face 1 at the same place is 36 px but marked ignore, face 2 is 12 px.
        let truths = [
            truth(0), GroundTruthFace(box: box(0, height: 36), ignore: true), truth(200, height: 12),
        ]
        let detections = [face(0, 0.5), face(0, 0.9), face(200, 0.8, height: 12), face(400, 0.7)]
        let verdicts = DetectionMatching.match(detections, to: truths, criteria: criteria)
        #expect(verdicts.map(\.detectionIndex) == [1, 2, 3, 0])
        #expect(verdicts.map(\.outcome) == [.truePositive, .ignored, .falsePositive, .ignored])
        #expect(verdicts[0].truthIndex == 0)
        // The 0.5 duplicate of face 0 overlaps the ignored face 1, so it is ignored rather than a false positive.
        #expect(verdicts[3].truthIndex == nil)
    }

    @Test("equal scores are matched in the order given")
    func matchingTies() {
        let verdicts = DetectionMatching.match(
            [face(0, 0.8), face(2, 0.8)], to: [truth(0)], criteria: MatchingCriteria())
        #expect(verdicts.map(\.detectionIndex) == [0, 1])
        #expect(verdicts.map(\.outcome) == [.truePositive, .falsePositive])
    }

    // MARK: - Recall at FPPI

    /// Image 0 has three faces; images 1...9 are negatives. Detections: TP 0.9 (image 0), FP 0.8 (image 1),
    /// TP 0.7, FP 0.6 and TP 0.5 (image 0).
    private func fppiImages() -> (annotations: [AnnotatedImage], detections: [[DetectedFace]]) {
        var annotations = [image("p", faces: [truth(0), truth(100), truth(200)])]
        var detections = [[face(0, 0.9), face(100, 0.7), face(400, 0.6), face(200, 0.5)]]
        for index in 1...9 {
            annotations.append(image("n\(index)", faces: []))
            detections.append(index == 1 ? [face(0, 0.8)] : [])
        }
        return (annotations, detections)
    }

    private func matched(_ annotations: [AnnotatedImage], _ detections: [[DetectedFace]]) -> [[MatchedDetection]] {
        zip(annotations, detections).map { DetectionMatching.match($1, to: $0.faces, criteria: MatchingCriteria()) }
    }

    @Test("recall at 0.1 FPPI stops before the threshold that exceeds the budget")
    func recallAtFPPI() {
        let (annotations, detections) = fppiImages()
        // 10 images, budget 0.1: one false positive allowed. Sweep: 0.9 → 1/3 (0 FP); 0.8 → 1/3 (1 FP);
        // 0.7 → 2/3 (1 FP); 0.6 → 2 FP, over budget. So 2/3 at threshold 0.7.
        let result = RecallAtFalsePositiveRate.compute(
            matched: matched(annotations, detections), countedFaces: 3, imageCount: 10, budget: 0.1)
        #expect(abs(result.recall - 2.0 / 3.0) < 1e-12)
        #expect(result.threshold == 0.7)
        #expect(result.truePositives == 2)
        #expect(result.falsePositives == 1)
    }

    @Test("tied scores are kept or dropped together")
    func recallAtFPPITies() {
        let (annotations, detections) = fppiImages()
        var tied = detections
        tied[0][2] = face(400, 0.7)  // the FP now ties with the 0.7 TP: at 0.7 there are 2 FP
        let result = RecallAtFalsePositiveRate.compute(
            matched: matched(annotations, tied), countedFaces: 3, imageCount: 10, budget: 0.1)
        #expect(abs(result.recall - 1.0 / 3.0) < 1e-12)
        #expect(result.threshold == 0.8)
    }

    @Test("no threshold within the budget gives recall 0")
    func recallAtFPPINone() {
        let annotations = [image("p", faces: [truth(0)]), image("n", faces: [])]
        let detections = [[face(0, 0.5)], [face(0, 0.9)]]
        let result = RecallAtFalsePositiveRate.compute(
            matched: matched(annotations, detections), countedFaces: 1, imageCount: 2, budget: 0.1)
        #expect(result.recall == 0)
        #expect(result.threshold == nil)
    }

    // MARK: - Eye NME

    @Test("eye error pairs eyes by x order and divides by the annotated inter-ocular distance")
    func eyeError() throws {
        // Annotated eyes given in reverse x order; inter-ocular distance 20.
        let annotated = truth(0, leftEye: FacePoint(x: 30, y: 10), rightEye: FacePoint(x: 10, y: 10))
        #expect(annotated.leftEye == FacePoint(x: 10, y: 10))
        // Detected: image-left eye 3 px low, image-right eye 1 px right → (3 + 1) / 2 / 20 = 0.1.
        let detected = DetectedFace(
            bounds: box(0), leftEye: FacePoint(x: 31, y: 10), rightEye: FacePoint(x: 10, y: 13), confidence: 0.9)
        let error = try #require(EyeLandmarkError.normalizedError(detected: detected, truth: annotated))
        #expect(abs(error - 0.1) < 1e-9)
        #expect(EyeLandmarkError.normalizedError(detected: face(0, 0.9), truth: annotated) == nil)
        #expect(EyeLandmarkError.normalizedError(detected: detected, truth: truth(0)) == nil)
    }

    @Test("eye error summary: mean and median (middle pair averaged)")
    func eyeErrorSummary() {
        let even = EyeLandmarkError.summarize([0.4, 0.1, 0.3, 0.2])
        #expect(even.count == 4)
        #expect(abs(even.mean - 0.25) < 1e-12)
        #expect(abs(even.median - 0.25) < 1e-12)
        let odd = EyeLandmarkError.summarize([0.1, 0.5, 0.2])
        #expect(abs(odd.median - 0.2) < 1e-12)
        #expect(abs(odd.mean - 0.8 / 3) < 1e-12)
        #expect(EyeLandmarkError.summarize([]) == EyeLandmarkError(count: 0, mean: 0, median: 0))
    }

    // MARK: - Recall by height

    @Test("recall by height buckets counted faces as 20-40, 40-80 and 80+")
    func recallByHeight() {
        let heights: [Float] = [10, 25, 39.9, 40, 79, 80, 200]
        let faces = heights.enumerated().map { truth(Float($0.offset) * 300, height: $0.element) }
        // Detections on the faces 25, 40 and 200 px tall (and on the uncounted 10 px one).
        let detections = [0, 1, 3, 6].map { face(Float($0) * 300, 0.9, height: heights[$0]) }
        let verdicts = DetectionMatching.match(detections, to: faces, criteria: MatchingCriteria())
        let result = RecallByHeight.compute(groundTruth: [faces], matched: [verdicts], criteria: MatchingCriteria())
        #expect(result.buckets.map(\.label) == ["20-40", "40-80", "80+"])
        #expect(result.buckets.map(\.faces) == [2, 2, 2])
        #expect(result.buckets.map(\.found) == [1, 1, 1])
        #expect(result.buckets[0].recall == 0.5)
    }

    // MARK: - Whole report

    /// Image a (source s1): a 30 px face with eyes and a 12 px face; image b (s1): a 100 px face; image n: none.
    /// Detections: a: 0.9 on the 30 px face (eyes), 0.95 on the small face, 0.4 nowhere; b: 0.5; n: 0.7.
    private func reportFixture() -> EvaluationReport {
        let annotations = [
            image("a", source: "s1", faces: [
                truth(0, height: 30, leftEye: FacePoint(x: 10, y: 10), rightEye: FacePoint(x: 30, y: 10)),
                truth(100, height: 12),
            ]),
            image("b", source: "s1", faces: [truth(0, height: 100)]),
            image("n", source: "neg", faces: []),
        ]
        let detections = [
            [
                face(0, 0.9, height: 30, leftEye: FacePoint(x: 12, y: 10), rightEye: FacePoint(x: 30, y: 10)),
                face(100, 0.95, height: 12), face(400, 0.4),
            ],
            [face(0, 0.5, height: 100)],
            [face(0, 0.7)],
        ]
        return EvaluationReport.compute(
            name: "fixture", annotations: annotations, detections: detections, milliseconds: [4, 1, 2, 3],
            operatingThreshold: 0.6)
    }

    @Test("AP, operating point, negatives, buckets, eye error and times of a hand-made set")
    func wholeReport() {
        let report = reportFixture()
        // Ranked (the ignored 0.95 left out): TP 0.9, FP 0.7, TP 0.5, FP 0.4 with 2 counted faces.
        // Precision 1, 1/2, 2/3, 1/2 → interpolated 1, 2/3, 2/3, 1/2; recall 1/2, 1/2, 1, 1.
        // AP = 1/2 · 1 + 1/2 · 2/3.
        #expect(abs(report.averagePrecision.value - (0.5 + 1.0 / 3.0)) < 1e-9)
        #expect(report.averagePrecision.countedFaces == 2)
        #expect(report.averagePrecision.ignoredDetections == 1)
        // Source s1 alone: TP 0.9, TP 0.5, FP 0.4 → AP 1.
        #expect(report.averagePrecisionBySource["s1"] == 1)
        #expect(report.averagePrecisionBySource["neg"] == nil)
        // 3 images, budget 0.3 FP: only the 0.9 TP fits.
        #expect(report.recallAtFalsePositiveRate.recall == 0.5)
        #expect(report.recallAtFalsePositiveRate.threshold == 0.9)
        // At 0.6: TP 0.9 (a), ignored 0.95 (a), FP 0.7 (n).
        #expect(report.recallAtOperatingThreshold == 0.5)
        #expect(report.precisionAtOperatingThreshold == 1)
        #expect(report.truePositivesAtOperatingThreshold == 1)
        #expect(report.falsePositivesAtOperatingThreshold == 1)
        #expect(report.falsePositivesOnNegatives == 1)
        #expect(report.negativeImagesWithFalsePositives == 1)
        #expect(report.negativeImages == 1)
        #expect(report.recallByHeight.buckets.map(\.faces) == [1, 0, 1])
        #expect(report.recallByHeight.buckets.map(\.found) == [1, 0, 0])
        // Eyes: (2 + 0) / 2 / 20.
        #expect(report.eyeError.count == 1)
        #expect(abs(report.eyeError.mean - 0.05) < 1e-9)
        #expect(report.medianMilliseconds == 2.5)
        #expect(report.meanMilliseconds == 2.5)
    }

    @Test("the JSON summary has the documented snake_case keys")
    func summaryJSON() throws {
        let summary = EvaluationSummary(
            run: EvaluationSummary.Run(
                implementation: "facewire", annotations: "dev.jsonl", backend: "yunet", model: nil, inputWidth: 320,
                evaluationThreshold: 0.3, threads: 1),
            report: reportFixture())
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(try summary.jsonString().utf8)) as? [String: Any])
        #expect(object["ap"] as? Double == 0.833333)
        #expect(object["input_width"] as? Int == 320)
        #expect(object["model"] is NSNull)
        #expect(object["counted_faces"] as? Int == 2)
        let operating = try #require(object["operating"] as? [String: Any])
        #expect(operating["false_positives_on_negatives"] as? Int == 1)
        let buckets = try #require(operating["recall_by_height"] as? [[String: Any]])
        #expect(buckets.map { $0["bucket"] as? String } == ["20-40", "40-80", "80+"])
        #expect(buckets[2]["max_height"] is NSNull)
        let fppi = try #require(object["recall_at_fppi"] as? [String: Any])
        #expect(fppi["recall"] as? Double == 0.5)
        let timing = try #require(object["timing"] as? [String: Any])
        #expect(timing["includes_decode"] as? Bool == false)
        #expect(timing["ms_per_image_median"] as? Double == 2.5)
        let eyes = try #require(object["eye_nme"] as? [String: Any])
        #expect(eyes["count"] as? Int == 1)
    }

    @Test("the table shows the bucket recalls")
    func table() {
        let table = reportFixture().metricTable()
        #expect(table.contains("| AP@0.4 | 0.8333 |"))
        #expect(table.contains("recall, faces 20-40 px | 1.0000 (1/1) |"))
        #expect(table.contains("recall, faces 80+ px | 0.0000 (0/1) |"))
    }

    // MARK: - Files

    @Test("a dump line reads back as the same numbers")
    func dumpLine() throws {
        let faces = [
            DetectedFace(
                bounds: FaceRect(x: 1.5, y: 2, width: 30.25, height: 0.1), leftEye: FacePoint(x: 3, y: 4),
                rightEye: FacePoint(x: 5.5, y: 4), confidence: 0.987654),
            DetectedFace(bounds: FaceRect(x: 0, y: 0, width: 10, height: 10), confidence: 1e-5),
        ]
        let line = DetectionDump.line(image: "images/a \"b\".jpg", faces: faces)
        #expect(!line.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["image"] as? String == "images/a \"b\".jpg")
        let read = try #require(object["faces"] as? [[String: Any]])
        #expect(read.count == 2)
        let boxValues = try #require(read[0]["box"] as? [Double]).map(Float.init)
        #expect(boxValues == [1.5, 2, 30.25, 0.1])
        #expect((read[0]["score"] as? Double).map(Float.init) == 0.987654)
        let landmarks = try #require(read[0]["landmarks"] as? [String: [Double]])
        #expect(landmarks["left_eye"] == [3, 4])
        #expect(landmarks["right_eye"] == [5.5, 4])
        #expect((read[1]["landmarks"] as? [String: Any])?.isEmpty == true)
        #expect((read[1]["score"] as? Double).map(Float.init) == 1e-5)
    }

    @Test("faces an annotation leaves out are added as ignored: a detection of one stops being a false positive; bad lines are refused")
    func unannotatedFaces() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("facewire-eval-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("extra.jsonl")
        let images = [image("a.jpg", faces: [truth(0)]), image("n.jpg", faces: [])]
        // A true positive at 0.6 and a real but unannotated face at 300 found at 0.9.
        let detections = [[face(0, 0.6), face(300, 0.9)], []]
        let before = AveragePrecision.compute(matched: matched(images, detections), countedFaces: 1)
        #expect(before.falsePositives == 1 && before.value < 0.6)

        try "{\"image\": \"a.jpg\", \"faces\": [[300, 0, 40, 40]]}\n".write(to: file, atomically: true, encoding: .utf8)
        let corrected = try AnnotatedImage.addingUnannotatedFaces(to: images, contentsOf: file)
        #expect(corrected[0].faces.count == 2 && corrected[0].faces[1].ignore && !corrected[0].faces[0].ignore)
        let after = AveragePrecision.compute(matched: matched(corrected, detections), countedFaces: 1)
        #expect(after.falsePositives == 0 && after.ignoredDetections == 1 && after.value == 1)

        for bad in [
            "{\"image\": \"missing.jpg\", \"faces\": [[1, 2, 3, 4]]}",  // not in the set
            "{\"image\": \"n.jpg\", \"faces\": [[1, 2, 3, 4]]}",  // a negative must stay one
            "{\"image\": \"a.jpg\", \"faces\": [[1, 2, 3]]}",
            "{\"image\": \"a.jpg\", \"faces\": [[1, 2, 0, 4]]}",
            "{\"image\": \"a.jpg\", \"faces\": [[1, 2, 1e39, 4]]}",  // not a finite Float
            "not json",
        ] {
            try (bad + "\n").write(to: file, atomically: true, encoding: .utf8)
            #expect(throws: DetectionError.self, "\(bad)") { try AnnotatedImage.addingUnannotatedFaces(to: images, contentsOf: file) }
        }
    }

    @Test("the project's own list of faces dev.jsonl leaves out names only images the set has, none face-free",
          .enabled(if: SharedData.available, SharedData.skipReason))
    func projectUnannotatedList() throws {
        let set = try AnnotatedImage.loadJSONLines(contentsOf: URL(fileURLWithPath: SharedData.path("faces/dev.jsonl")))
        let list = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("evaluation/dev-unannotated.jsonl")
        let corrected = try AnnotatedImage.addingUnannotatedFaces(to: set, contentsOf: list)
        let added = zip(set, corrected).map { $1.faces.count - $0.faces.count }.reduce(0, +)
        #expect(added == 415)
    }

    @Test("annotation files: eyes are read in x order; a missing file or a bad line is a clear error")
    func annotationFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("facewire-eval-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("set.jsonl")
        let text = """
            {"image": "a.jpg", "width": 100, "height": 80, "source": "x", "faces": [{"box": [1, 2, 30, 40], \
            "landmarks": {"left_eye": [20, 10], "right_eye": [8, 11], "nose": [14, 20]}, "ignore": false}]}
            {"image": "n.png", "width": 100, "height": 80, "faces": []}
            """
        try text.write(to: file, atomically: true, encoding: .utf8)
        let images = try AnnotatedImage.loadJSONLines(contentsOf: file)
        #expect(images.count == 2)
        #expect(images[0].faces[0].leftEye == FacePoint(x: 8, y: 11))
        #expect(images[0].faces[0].rightEye == FacePoint(x: 20, y: 10))
        #expect(images[1].isNegative)
        #expect(images[1].source == "")

        #expect(throws: DetectionError.self) {
            try AnnotatedImage.loadJSONLines(contentsOf: folder.appendingPathComponent("missing.jsonl"))
        }
        try "{\"image\": \"a.jpg\", \"faces\": [{\"box\": [1, 2, 3]}]}\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(throws: DetectionError.self) { try AnnotatedImage.loadJSONLines(contentsOf: file) }
        // An image the file names but that is not there fails with its path.
        try "{\"image\": \"nope.jpg\", \"width\": 1, \"height\": 1, \"faces\": []}\n".write(
            to: file, atomically: true, encoding: .utf8)
        #expect(throws: DetectionError.self) { try DetectorEvaluator(annotationFile: file) }
    }
}
