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

    /// Outcome of matching one detection.
    enum Outcome: Equatable {
        case truePositive, falsePositive, ignored
    }

    /// Matches the detections of one image greedily, best score first. Each detection takes the unmatched
    /// counted face it overlaps most (IoU at least the threshold); failing that, a detection overlapping an
    /// ignored face is ignored; otherwise it is a false positive.
    static func match(_ sample: Sample, criteria: MatchingCriteria) -> [(score: Float, outcome: Outcome)] {
        let counted = sample.groundTruth.map { !$0.ignore && $0.box.height >= criteria.minimumFaceHeight }
        var taken = [Bool](repeating: false, count: sample.groundTruth.count)
        let ordered = sample.detections.sorted { $0.confidence > $1.confidence }
        var result: [(score: Float, outcome: Outcome)] = []
        result.reserveCapacity(ordered.count)
        for detection in ordered {
            var best = -1
            var bestIoU = criteria.iouThreshold
            var overlapsIgnored = false
            for (index, truth) in sample.groundTruth.enumerated() {
                let iou = detection.bounds.intersectionOverUnion(truth.box)
                guard iou >= criteria.iouThreshold else { continue }
                if !counted[index] {
                    overlapsIgnored = true
                } else if !taken[index], iou >= bestIoU {
                    best = index
                    bestIoU = iou
                }
            }
            if best >= 0 {
                taken[best] = true
                result.append((detection.confidence, .truePositive))
            } else {
                result.append((detection.confidence, overlapsIgnored ? .ignored : .falsePositive))
            }
        }
        return result
    }

    /// Computes AP over `samples`.
    public static func compute(_ samples: [Sample], criteria: MatchingCriteria = MatchingCriteria()) -> AveragePrecision {
        var countedFaces = 0
        var outcomes: [(score: Float, outcome: Outcome)] = []
        for sample in samples {
            countedFaces += sample.groundTruth.filter { !$0.ignore && $0.box.height >= criteria.minimumFaceHeight }.count
            outcomes += match(sample, criteria: criteria)
        }
        let ignored = outcomes.filter { $0.outcome == .ignored }.count
        let ranked = outcomes.filter { $0.outcome != .ignored }.sorted { $0.score > $1.score }
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
}
