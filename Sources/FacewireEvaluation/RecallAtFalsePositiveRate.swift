import FacewireDetection
/// Recall at a budget of false positives per image (FPPI), the usual single number of a detection ROC curve.
///
/// Definition: for a score threshold `t`, keep every detection with score ≥ `t` on **every** image, negatives
/// included, and match them with ``DetectionMatching`` (detections matching only uncounted faces are left out).
/// `FP(t)` and `TP(t)` are the false and true positives kept, and `FPPI(t) = FP(t) / images`. The result is the
/// highest `TP(t) / countedFaces` over all thresholds `t` with `FPPI(t) ≤ budget`; `t` sweeps over the distinct
/// detection scores (detections with equal scores are kept or dropped together). Since `TP` and `FP` only grow as
/// `t` falls, this is the recall at the lowest threshold that stays within the budget, and ``threshold`` is that
/// score. When even the best-scored detections exceed the budget, the recall is 0 and ``threshold`` is `nil`.
public struct RecallAtFalsePositiveRate: Sendable, Equatable {
    /// The false-positive budget per image (for example 0.1).
    public var falsePositivesPerImage: Double
    /// The recall reached within the budget, in `0...1`.
    public var recall: Double
    /// The lowest score kept at that point, or `nil` when no threshold meets the budget.
    public var threshold: Float?
    /// True positives kept at ``threshold``.
    public var truePositives: Int
    /// False positives kept at ``threshold`` (at most `budget × images`).
    public var falsePositives: Int

    /// Creates a result.
    public init(falsePositivesPerImage: Double, recall: Double, threshold: Float?, truePositives: Int, falsePositives: Int) {
        self.falsePositivesPerImage = falsePositivesPerImage
        self.recall = recall
        self.threshold = threshold
        self.truePositives = truePositives
        self.falsePositives = falsePositives
    }

    /// Computes the recall at `budget` false positives per image.
    /// - Parameters:
    ///   - matched: one array per image (negatives included), from ``DetectionMatching/match(_:to:criteria:)``.
    ///   - countedFaces: counted ground-truth faces over all images.
    ///   - imageCount: number of images, the FPPI denominator (normally `matched.count`).
    ///   - budget: false positives per image allowed.
    public static func compute(
        matched: [[MatchedDetection]], countedFaces: Int, imageCount: Int, budget: Double = 0.1
    ) -> RecallAtFalsePositiveRate {
        let ranked = AveragePrecision.rankedVerdicts(matched)
        var best = RecallAtFalsePositiveRate(
            falsePositivesPerImage: budget, recall: 0, threshold: nil, truePositives: 0, falsePositives: 0)
        guard imageCount > 0 else { return best }
        var tp = 0
        var fp = 0
        for (index, verdict) in ranked.enumerated() {
            if verdict.outcome == .truePositive { tp += 1 } else { fp += 1 }
            // A threshold can only fall between two different scores.
            if index + 1 < ranked.count, ranked[index + 1].score == verdict.score { continue }
            guard Double(fp) / Double(imageCount) <= budget else { break }
            best.recall = countedFaces > 0 ? Double(tp) / Double(countedFaces) : 0
            best.threshold = verdict.score
            best.truePositives = tp
            best.falsePositives = fp
        }
        return best
    }
}
