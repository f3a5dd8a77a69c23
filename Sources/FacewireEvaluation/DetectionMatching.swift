import FacewireDetection
import FacewireVocabulary
/// How one detection was judged against an image's ground truth.
public struct MatchedDetection: Sendable, Equatable {
    /// What a detection turned out to be.
    public enum Outcome: Sendable, Equatable {
        /// It matched a counted face (``MatchedDetection/truthIndex`` says which).
        case truePositive
        /// It matched nothing countable: a false positive.
        case falsePositive
        /// It matched no counted face but overlaps an ignored (small or difficult) face: left out of every count.
        case ignored
    }

    /// The detection's confidence.
    public var score: Float
    /// The verdict.
    public var outcome: Outcome
    /// Index into the sample's detections (as given, not sorted).
    public var detectionIndex: Int
    /// Index into the sample's ground truth of the matched counted face; `nil` unless a true positive.
    public var truthIndex: Int?

    /// Creates a verdict.
    public init(score: Float, outcome: Outcome, detectionIndex: Int, truthIndex: Int? = nil) {
        self.score = score
        self.outcome = outcome
        self.detectionIndex = detectionIndex
        self.truthIndex = truthIndex
    }
}

/// Greedy matching of one image's detections to its ground truth, the rule every metric here shares.
///
/// Detections are taken best score first (ties: in the order given). Each takes the not-yet-taken **counted**
/// face it overlaps most, with IoU at least ``MatchingCriteria/iouThreshold`` (ties: the later face). Failing
/// that, a detection whose IoU with any face that is **not counted** (marked ignore, or shorter than
/// ``MatchingCriteria/minimumFaceHeight``) reaches the threshold is ``MatchedDetection/Outcome/ignored``;
/// anything else is a false positive. So a missed small face costs nothing and a detection of it is not a false
/// positive, while a second detection of a counted face is.
///
/// Because detections are taken in score order, the matches of the detections at or above any threshold are the
/// same as if only those detections had been given: metrics at an operating threshold can filter the result.
public enum DetectionMatching {
    /// Matches `detections` against `groundTruth`; the result is in matching order (best score first).
    public static func match(
        _ detections: [DetectedFace], to groundTruth: [GroundTruthFace], criteria: MatchingCriteria
    ) -> [MatchedDetection] {
        let counted = groundTruth.map { $0.isCounted(under: criteria) }
        var taken = [Bool](repeating: false, count: groundTruth.count)
        // Sort indices explicitly by (score desc, index asc) so ties are broken the same way in every port.
        let order = detections.indices.sorted {
            detections[$0].confidence != detections[$1].confidence
                ? detections[$0].confidence > detections[$1].confidence : $0 < $1
        }
        var result: [MatchedDetection] = []
        result.reserveCapacity(order.count)
        for index in order {
            let detection = detections[index]
            var best = -1
            var bestIoU = criteria.iouThreshold
            var overlapsIgnored = false
            for (truthIndex, truth) in groundTruth.enumerated() {
                let iou = detection.bounds.intersectionOverUnion(truth.box)
                guard iou >= criteria.iouThreshold else { continue }
                if !counted[truthIndex] {
                    overlapsIgnored = true
                } else if !taken[truthIndex], iou >= bestIoU {
                    best = truthIndex
                    bestIoU = iou
                }
            }
            if best >= 0 {
                taken[best] = true
                result.append(
                    MatchedDetection(
                        score: detection.confidence, outcome: .truePositive, detectionIndex: index, truthIndex: best))
            } else {
                result.append(
                    MatchedDetection(
                        score: detection.confidence, outcome: overlapsIgnored ? .ignored : .falsePositive,
                        detectionIndex: index))
            }
        }
        return result
    }
}
