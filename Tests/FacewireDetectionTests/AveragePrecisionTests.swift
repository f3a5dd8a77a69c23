import FacewireDetection
import Testing
import FacewireVocabulary
import FacewireEvaluation

@Suite("Average precision")
struct AveragePrecisionTests {
    private func face(_ x: Float, _ score: Float, height: Float = 40) -> DetectedFace {
        DetectedFace(bounds: FaceRect(x: x, y: 0, width: 40, height: height), confidence: score)
    }

    private func truth(_ x: Float, height: Float = 40) -> GroundTruthFace {
        GroundTruthFace(box: FaceRect(x: x, y: 0, width: 40, height: height))
    }

    @Test("perfect detections give AP 1")
    func perfect() {
        let sample = AveragePrecision.Sample(groundTruth: [truth(0), truth(100)], detections: [face(0, 0.9), face(100, 0.8)])
        let ap = AveragePrecision.compute([sample])
        #expect(ap.value == 1)
        #expect(ap.truePositives == 2)
        #expect(ap.falsePositives == 0)
    }

    @Test("all-points interpolation")
    func interpolation() {
        // Ranked: TP (0.9), FP (0.8), TP (0.7); two faces. Precision 1, 0.5, 0.667; recall 0.5, 0.5, 1.
        // Interpolated: 1 at recall 0.5, 0.667 at recall 1 → AP = 0.5 + 0.5 * 2/3.
        let sample = AveragePrecision.Sample(
            groundTruth: [truth(0), truth(100)], detections: [face(0, 0.9), face(300, 0.8), face(100, 0.7)])
        let ap = AveragePrecision.compute([sample])
        #expect(abs(ap.value - (0.5 + 0.5 * 2.0 / 3.0)) < 1e-9)
        #expect(ap.maximumRecall == 1)
    }

    @Test("a duplicate detection is a false positive; a miss lowers recall")
    func duplicatesAndMisses() {
        let sample = AveragePrecision.Sample(
            groundTruth: [truth(0), truth(100)], detections: [face(0, 0.9), face(2, 0.8)])
        let ap = AveragePrecision.compute([sample])
        #expect(ap.truePositives == 1)
        #expect(ap.falsePositives == 1)
        #expect(ap.value == 0.5)
    }

    @Test("faces under the minimum height neither count nor make false positives")
    func smallFacesIgnored() {
        let sample = AveragePrecision.Sample(
            groundTruth: [truth(0), truth(100, height: 12)],
            detections: [face(0, 0.9), face(100, 0.95, height: 12)])
        let ap = AveragePrecision.compute([sample], criteria: MatchingCriteria(iouThreshold: 0.4, minimumFaceHeight: 20))
        #expect(ap.countedFaces == 1)
        #expect(ap.ignoredDetections == 1)
        #expect(ap.falsePositives == 0)
        #expect(ap.value == 1)
    }

    @Test("detections on negative images are false positives")
    func negatives() {
        let positive = AveragePrecision.Sample(groundTruth: [truth(0)], detections: [face(0, 0.5)])
        let negative = AveragePrecision.Sample(groundTruth: [], detections: [face(0, 0.9)])
        let ap = AveragePrecision.compute([positive, negative])
        #expect(ap.value == 0.5)
    }
}
