import FacewireDetection
import FacewireVocabulary
/// Average precision of a detector over a set of images, with greedy matching by score and the standard
/// all-points interpolation (as in PASCAL VOC 2010+ and WIDER FACE).
public struct AveragePrecision: Sendable, Equatable {
    /// One image's ground truth and detections.
    public struct Sample: Sendable, Equatable {
        /// The annotated faces.
        public var groundTruth: [GroundTruthFace]
        /// What the detector found (any order).
        public var detections: [DetectedFace]

        /// Creates a sample.
        public init(groundTruth: [GroundTruthFace], detections: [DetectedFace]) {
            self.groundTruth = groundTruth
            self.detections = detections
        }
    }

    /// The area under the interpolated precision/recall curve, in `0...1`.
    public var value: Double
    /// Ground-truth faces that count (not ignored, at least the minimum height).
    public var countedFaces: Int
    /// Detections matched to a counted face, over all scores.
    public var truePositives: Int
    /// Detections matched to nothing countable, over all scores.
    public var falsePositives: Int
    /// Detections that matched an ignored (small or difficult) face and were left out.
    public var ignoredDetections: Int
    /// The highest recall reached.
    public var maximumRecall: Double

    /// Creates a result.
    public init(
        value: Double, countedFaces: Int, truePositives: Int, falsePositives: Int, ignoredDetections: Int,
        maximumRecall: Double
    ) {
        self.value = value
        self.countedFaces = countedFaces
        self.truePositives = truePositives
        self.falsePositives = falsePositives
        self.ignoredDetections = ignoredDetections
        self.maximumRecall = maximumRecall
    }

    /// Computes AP over `samples`, matching each with ``DetectionMatching/match(_:to:criteria:)``.
    public static func compute(_ samples: [Sample], criteria: MatchingCriteria = MatchingCriteria()) -> AveragePrecision {
        let countedFaces = samples.reduce(0) { total, sample in
            total + sample.groundTruth.filter { $0.isCounted(under: criteria) }.count
        }
        let matched = samples.map { DetectionMatching.match($0.detections, to: $0.groundTruth, criteria: criteria) }
        return compute(matched: matched, countedFaces: countedFaces)
    }

    /// Computes AP from already matched images.
    ///
    /// All images' verdicts are ranked together by score, highest first; ties keep image order, then matching
    /// order (a deterministic rule the Python baseline copies). Ignored verdicts are dropped. Precision is made
    /// non-increasing from the right (all-points interpolation) and summed over the recall steps.
    /// - Parameters:
    ///   - matched: one array per image, as ``DetectionMatching/match(_:to:criteria:)`` returns it.
    ///   - countedFaces: the number of counted ground-truth faces over all images (the recall denominator).
    public static func compute(matched: [[MatchedDetection]], countedFaces: Int) -> AveragePrecision {
        let all = matched.joined()
        let ignored = all.filter { $0.outcome == .ignored }.count
        let ranked = rankedVerdicts(matched)
        var tp = 0
        var fp = 0
        var precision: [Double] = []
        var recall: [Double] = []
        precision.reserveCapacity(ranked.count)
        recall.reserveCapacity(ranked.count)
        for entry in ranked {
            if entry.outcome == .truePositive { tp += 1 } else { fp += 1 }
            precision.append(Double(tp) / Double(tp + fp))
            recall.append(countedFaces > 0 ? Double(tp) / Double(countedFaces) : 0)
        }
        // All-points interpolation: make precision non-increasing from the right, then sum over recall steps.
        if precision.count > 1 {
            for index in stride(from: precision.count - 2, through: 0, by: -1) {
                precision[index] = max(precision[index], precision[index + 1])
            }
        }
        var ap = 0.0
        var previousRecall = 0.0
        for (p, r) in zip(precision, recall) where r > previousRecall {
            ap += (r - previousRecall) * p
            previousRecall = r
        }
        return AveragePrecision(
            value: ap, countedFaces: countedFaces, truePositives: tp, falsePositives: fp, ignoredDetections: ignored,
            maximumRecall: recall.last ?? 0)
    }

    /// Every true- and false-positive verdict of all images, best score first; ties keep image order, then
    /// matching order.
    static func rankedVerdicts(_ matched: [[MatchedDetection]]) -> [MatchedDetection] {
        var entries: [(image: Int, position: Int, verdict: MatchedDetection)] = []
        for (image, verdicts) in matched.enumerated() {
            for (position, verdict) in verdicts.enumerated() where verdict.outcome != .ignored {
                entries.append((image, position, verdict))
            }
        }
        entries.sort { a, b in
            if a.verdict.score != b.verdict.score { return a.verdict.score > b.verdict.score }
            if a.image != b.image { return a.image < b.image }
            return a.position < b.position
        }
        return entries.map(\.verdict)
    }
}
