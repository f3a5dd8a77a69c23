import FacewireDetection
import Testing
import FacewireVocabulary
import FacewireEvaluation

@Suite("Attribute evaluation")
struct AttributeEvaluationTests {
    @Test func genkiLabelsParseToDegrees() throws {
        let labels = try AttributeEvaluation.parseGenkiLabels(
            "file\tsmile\tyaw\tpitch\troll\nimages/a.jpg\t1\t0.1\t-0.2\t0\nimages/b.jpg\t0\t\t0.05\t-0.3\n")
        #expect(labels.count == 2)
        #expect(labels[0].file == "images/a.jpg" && labels[0].smile == true)
        #expect(abs(labels[0].yaw! - 5.7296) < 1e-3)
        #expect(abs(labels[0].pitch! + 11.459) < 1e-3, "GENKI's pitch sign is kept")
        #expect(labels[1].smile == false && labels[1].yaw == nil)
        #expect(throws: DetectionError.self) { try AttributeEvaluation.parseGenkiLabels("file\tsmile\nx.jpg\t2\n") }
        #expect(throws: DetectionError.self) { try AttributeEvaluation.parseGenkiLabels("name\tvalue\nx.jpg\t1\n") }
        #expect(throws: DetectionError.self) { try AttributeEvaluation.parseGenkiLabels("file\tsmile\tyaw\nx.jpg\t1\tnan\n") }
    }

    @Test func countsAndRates() {
        var counts = AttributeEvaluation.BinaryCounts()
        for (predicted, actual) in [(true, true), (true, true), (true, false), (false, true), (false, false), (false, false)] {
            counts.add(predicted: predicted, actual: actual)
        }
        #expect(counts.total == 6)
        #expect(counts.accuracy == 4.0 / 6)
        #expect(counts.precision == 2.0 / 3)
        #expect(counts.recall == 2.0 / 3)
        #expect(counts.falsePositiveRate == 1.0 / 3)
        #expect(AttributeEvaluation.BinaryCounts().precision.isNaN)
    }

    @Test func aMissedFaceCountsAsANegativeAndIsNotPoseScored() {
        var report = AttributeEvaluation.Report(name: "t")
        var face = DetectedFace(bounds: FaceRect(x: 0, y: 0, width: 100, height: 100), confidence: 1)
        face.expression = FaceExpression(smileScore: 0.9, hasSmile: true, leftEyeClosedScore: 0.9, leftEyeClosed: true, rightEyeClosedScore: 0.1)
        face.yaw = 10
        face.attributeSource = .mesh
        report.add(
            AttributeEvaluation.Label(file: "a", smile: true, eyesClosed: true, yaw: 4), AttributeEvaluation.Prediction(face: face),
            attributeMilliseconds: 3, detectMilliseconds: 10)
        report.add(AttributeEvaluation.Label(file: "b", smile: true, eyesClosed: true, yaw: 0), nil, attributeMilliseconds: nil, detectMilliseconds: 12)
        #expect(report.images == 2 && report.noFace == 1 && report.fallback == 0)
        #expect(report.smile.truePositives == 1 && report.smile.falseNegatives == 1)
        #expect(report.eyesClosed.falseNegatives == 2, "one eye closed is not both")
        #expect(report.closedReadAsOneEye == 1)
        #expect(report.yawErrors == [6])
        #expect(AttributeEvaluation.Report.median([3, 1, 2, 10]) == 2.5)
        #expect(report.table().contains("smile        accuracy 0.500"))
    }

    @Test func thresholdSweeps() throws {
        var report = AttributeEvaluation.Report(name: "t")
        // Smiles at 0.9 and 0.6, non-smiles at 0.7 and 0.2, one smile without a face: best accuracy at >= 0.6 (3 of 5).
        report.smileScores = [(0.9, true), (0.6, true), (0.7, false), (0.2, false), (nil, true)].map {
            AttributeEvaluation.ScoredLabel(score: $0.0, positive: $0.1)
        }
        let smile = try #require(report.bestSmileThreshold())
        #expect(smile.threshold == 0.6 && smile.counts.truePositives == 2 && smile.counts.falsePositives == 1)
        // Eyes: open faces at 0.8 and 0.3; the lowest threshold with no open face read closed is 0.9.
        report.eyeScores = [(0.95, true), (0.9, true), (0.8, false), (0.3, false)].map {
            AttributeEvaluation.ScoredLabel(score: $0.0, positive: $0.1)
        }
        let eyes = try #require(report.bestEyesThreshold(maximumOpenReadClosed: 0))
        #expect(eyes.threshold == 0.9 && eyes.counts.recall == 1)
        #expect(report.bestEyesThreshold(maximumOpenReadClosed: 0.5)?.threshold == 0.8)
        #expect(AttributeEvaluation.Report(name: "empty").bestSmileThreshold() == nil)
    }

    @Test("AFLW2000-3D's labels: degrees in its order; absurd angles and missing columns are refused")
    func poseLabels() throws {
        let labels = try AttributeEvaluation.parsePoseLabels("file\tpitch_deg\tyaw_deg\troll_deg\nimages/a.jpg\t-7.5\t12\t1.25\n")
        #expect(labels.count == 1 && labels[0].file == "images/a.jpg" && labels[0].aflwOrder)
        #expect(labels[0].pitch == -7.5 && labels[0].yaw == 12 && labels[0].roll == 1.25)
        for bad in ["file\tpitch_deg\tyaw_deg\nx\t1\t2\n", "file\tpitch_deg\tyaw_deg\troll_deg\nx\t1\tnan\t0\n",
                    "file\tpitch_deg\tyaw_deg\troll_deg\nx\t1\t2\t999\n", "file\tpitch_deg\tyaw_deg\troll_deg\nx\t1\t2\n"] {
            #expect(throws: DetectionError.self) { try AttributeEvaluation.parsePoseLabels(bad) }
        }
    }

    @Test("Facewire's angles re-read in AFLW's order and signs (numbers from numpy with the same matrices)")
    func aflwOrder() throws {
        for (ours, theirs) in [
            ((10.0, -5.0, 3.0), (-9.725, -5.519, 3.032)), ((-30.0, 20.0, -15.0), (34.03, 10.899, -17.066)),
            ((0.0, 10.0, 0.0), (0.0, 10.0, 0.0)), ((20.0, 0.0, 0.0), (-20.0, 0.0, 0.0)), ((0.0, 0.0, 10.0), (0.0, 0.0, 10.0)),
        ] {
            let got = try #require(AttributeEvaluation.aflwAngles(yaw: ours.0, pitch: ours.1, roll: ours.2))
            #expect(abs(got.yaw - theirs.0) < 0.01 && abs(got.pitch - theirs.1) < 0.01 && abs(got.roll - theirs.2) < 0.01, "\(ours): \(got)")
        }
        #expect(AttributeEvaluation.aflwAngles(yaw: .nan, pitch: 0, roll: 0) == nil)
        // A report compares in AFLW's order: a face read (yaw 20) against a label of AFLW yaw −20 is exact.
        var report = AttributeEvaluation.Report(name: "pose")
        var label = AttributeEvaluation.Label(file: "a", yaw: -20, pitch: 0, roll: 0)
        label.aflwOrder = true
        var prediction = AttributeEvaluation.Prediction()
        (prediction.yaw, prediction.pitch, prediction.roll) = (20, 0, 0)
        report.add(label, prediction, attributeMilliseconds: 1, detectMilliseconds: 1)
        #expect(report.yawErrors.count == 1 && report.yawErrors[0] < 1e-9 && report.pitchErrors[0] < 1e-9)
        #expect(report.table().contains("pose on 1 of 1 images (100.0 %)"))
    }
}
