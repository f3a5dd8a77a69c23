import FacewireDetection
import FacewireVocabulary
/// The scores of one detector configuration on an annotated image set.
///
/// Build it with ``compute(name:annotations:detections:milliseconds:criteria:operatingThreshold:fppiBudget:)``
/// (pure) or ``DetectorEvaluator/evaluate(name:detector:operatingThreshold:inputWidth:)`` (runs a detector).
/// Every figure follows ``DetectionMatching``'s rule: faces under ``MatchingCriteria/minimumFaceHeight`` (or
/// marked ignore) are not counted, and detections that match only such faces are neither true nor false positives.
public struct EvaluationReport: Sendable, Equatable {
    /// A label for the configuration (for example "YuNet 320").
    public var name: String
    /// The matching rule used.
    public var criteria: MatchingCriteria
    /// Number of images evaluated.
    public var imageCount: Int
    /// AP over every image (negatives included), from all detections the detector returned (run it with a low
    /// score threshold so the curve is complete).
    public var averagePrecision: AveragePrecision
    /// AP per `source` group of the annotations (positive images of that group only).
    public var averagePrecisionBySource: [String: Double]
    /// Recall at 0.1 false positives per image (see ``RecallAtFalsePositiveRate``), over every image.
    public var recallAtFalsePositiveRate: RecallAtFalsePositiveRate
    /// The confidence threshold the detector would run with in production; the figures below use only
    /// detections at or above it.
    public var operatingThreshold: Float
    /// Recall of counted faces at ``operatingThreshold``.
    public var recallAtOperatingThreshold: Double
    /// Precision on the **positive** images at ``operatingThreshold`` (detections on negatives are left out here,
    /// see ``falsePositivesOnNegatives``; matches to ignored faces are left out).
    public var precisionAtOperatingThreshold: Double
    /// True positives at ``operatingThreshold``, over every image.
    public var truePositivesAtOperatingThreshold: Int
    /// False positives at ``operatingThreshold``, over every image (negatives included).
    public var falsePositivesAtOperatingThreshold: Int
    /// Number of negative (face-free) images.
    public var negativeImages: Int
    /// Detections at or above ``operatingThreshold`` on the negative images.
    public var falsePositivesOnNegatives: Int
    /// Negative images with at least one detection at or above ``operatingThreshold``.
    public var negativeImagesWithFalsePositives: Int
    /// Recall by annotated face height at ``operatingThreshold`` (20–40, 40–80, 80+ px by default).
    public var recallByHeight: RecallByHeight
    /// Eye-landmark NME of the true positives at ``operatingThreshold``.
    public var eyeError: EyeLandmarkError
    /// Mean time of one warm `detect` call on an already decoded image (resize, model, post-processing and
    /// mapping back; decoding excluded). `facewire eval` times a detector at ``operatingThreshold`` (see
    /// ``DetectorEvaluator/run(detector:timedDetector:inputWidth:progress:)``).
    public var meanMilliseconds: Double
    /// Median time of one `detect` call (the same measurement).
    public var medianMilliseconds: Double

    /// Creates a report.
    public init(
        name: String, criteria: MatchingCriteria, imageCount: Int, averagePrecision: AveragePrecision,
        averagePrecisionBySource: [String: Double], recallAtFalsePositiveRate: RecallAtFalsePositiveRate,
        operatingThreshold: Float, recallAtOperatingThreshold: Double, precisionAtOperatingThreshold: Double,
        truePositivesAtOperatingThreshold: Int, falsePositivesAtOperatingThreshold: Int, negativeImages: Int,
        falsePositivesOnNegatives: Int, negativeImagesWithFalsePositives: Int, recallByHeight: RecallByHeight,
        eyeError: EyeLandmarkError, meanMilliseconds: Double, medianMilliseconds: Double
    ) {
        self.name = name
        self.criteria = criteria
        self.imageCount = imageCount
        self.averagePrecision = averagePrecision
        self.averagePrecisionBySource = averagePrecisionBySource
        self.recallAtFalsePositiveRate = recallAtFalsePositiveRate
        self.operatingThreshold = operatingThreshold
        self.recallAtOperatingThreshold = recallAtOperatingThreshold
        self.precisionAtOperatingThreshold = precisionAtOperatingThreshold
        self.truePositivesAtOperatingThreshold = truePositivesAtOperatingThreshold
        self.falsePositivesAtOperatingThreshold = falsePositivesAtOperatingThreshold
        self.negativeImages = negativeImages
        self.falsePositivesOnNegatives = falsePositivesOnNegatives
        self.negativeImagesWithFalsePositives = negativeImagesWithFalsePositives
        self.recallByHeight = recallByHeight
        self.eyeError = eyeError
        self.meanMilliseconds = meanMilliseconds
        self.medianMilliseconds = medianMilliseconds
    }

    /// Scores detections that are already known (pure: no detector runs).
    /// - Parameters:
    ///   - name: the label of the report.
    ///   - annotations: the images with their ground truth.
    ///   - detections: what the detector returned for each image, parallel to `annotations`.
    ///   - milliseconds: the timed detection per image (may be empty, then the times are 0).
    ///   - criteria: the matching rule.
    ///   - operatingThreshold: the production threshold for the operating-point figures.
    ///   - fppiBudget: false positives per image for ``recallAtFalsePositiveRate``.
    /// - Precondition: `detections.count == annotations.count`.
    public static func compute(
        name: String, annotations: [AnnotatedImage], detections: [[DetectedFace]], milliseconds: [Double] = [],
        criteria: MatchingCriteria = MatchingCriteria(), operatingThreshold: Float, fppiBudget: Double = 0.1
    ) -> EvaluationReport {
        precondition(annotations.count == detections.count, "one detection list per image")
        let matched = zip(annotations, detections).map { annotation, faces in
            DetectionMatching.match(faces, to: annotation.faces, criteria: criteria)
        }
        let countedFaces = annotations.reduce(0) { $0 + $1.faces.filter { $0.isCounted(under: criteria) }.count }
        let overall = AveragePrecision.compute(matched: matched, countedFaces: countedFaces)
        var bySource: [String: Double] = [:]
        for source in Set(annotations.map(\.source)) {
            let indices = annotations.indices.filter { annotations[$0].source == source && !annotations[$0].isNegative }
            guard !indices.isEmpty else { continue }
            let counted = indices.reduce(0) { $0 + annotations[$1].faces.filter { $0.isCounted(under: criteria) }.count }
            bySource[source] = AveragePrecision.compute(matched: indices.map { matched[$0] }, countedFaces: counted).value
        }
        let atFPPI = RecallAtFalsePositiveRate.compute(
            matched: matched, countedFaces: countedFaces, imageCount: annotations.count, budget: fppiBudget)

        // Operating point: matching is greedy in score order, so the verdicts of the detections at or above the
        // threshold are exactly those of matching only them.
        let kept = matched.map { $0.filter { $0.score >= operatingThreshold } }
        var tp = 0
        var fp = 0
        var fpOnPositives = 0
        var fpOnNegatives = 0
        var negativesWithFP = 0
        var eyeErrors: [Double] = []
        for (index, verdicts) in kept.enumerated() {
            let annotation = annotations[index]
            let falsePositives = verdicts.filter { $0.outcome == .falsePositive }.count
            tp += verdicts.filter { $0.outcome == .truePositive }.count
            fp += falsePositives
            if annotation.isNegative {
                fpOnNegatives += falsePositives
                if falsePositives > 0 { negativesWithFP += 1 }
            } else {
                fpOnPositives += falsePositives
            }
            for verdict in verdicts {
                guard verdict.outcome == .truePositive, let truth = verdict.truthIndex else { continue }
                if let error = EyeLandmarkError.normalizedError(
                    detected: detections[index][verdict.detectionIndex], truth: annotation.faces[truth])
                {
                    eyeErrors.append(error)
                }
            }
        }
        let byHeight = RecallByHeight.compute(groundTruth: annotations.map(\.faces), matched: kept, criteria: criteria)

        let sorted = milliseconds.sorted()
        let median: Double
        if sorted.isEmpty {
            median = 0
        } else if sorted.count % 2 == 1 {
            median = sorted[sorted.count / 2]
        } else {
            median = (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        let mean = milliseconds.isEmpty ? 0 : milliseconds.reduce(0, +) / Double(milliseconds.count)
        return EvaluationReport(
            name: name, criteria: criteria, imageCount: annotations.count, averagePrecision: overall,
            averagePrecisionBySource: bySource, recallAtFalsePositiveRate: atFPPI,
            operatingThreshold: operatingThreshold,
            recallAtOperatingThreshold: countedFaces > 0 ? Double(tp) / Double(countedFaces) : 0,
            precisionAtOperatingThreshold: tp + fpOnPositives > 0 ? Double(tp) / Double(tp + fpOnPositives) : 0,
            truePositivesAtOperatingThreshold: tp, falsePositivesAtOperatingThreshold: fp,
            negativeImages: annotations.filter(\.isNegative).count, falsePositivesOnNegatives: fpOnNegatives,
            negativeImagesWithFalsePositives: negativesWithFP, recallByHeight: byHeight,
            eyeError: EyeLandmarkError.summarize(eyeErrors), meanMilliseconds: mean, medianMilliseconds: median)
    }
}
