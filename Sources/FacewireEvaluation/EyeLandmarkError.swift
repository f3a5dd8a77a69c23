import FacewireDetection
import FacewireVocabulary
import Foundation

/// Eye-landmark error normalised by the inter-ocular distance (NME), over matched faces.
///
/// For one detection matched to a ground-truth face where **both** have both eyes, the error is
/// `(|d_left − g_left| + |d_right − g_right|) / 2 / |g_left − g_right|`: the mean Euclidean distance of the two
/// eyes over the annotated inter-ocular distance. Eyes are paired by x order (image-left with image-left), not by
/// the model's landmark index. Pairs where either side lacks an eye, or the annotated eyes coincide, are skipped.
public struct EyeLandmarkError: Sendable, Equatable {
    /// Number of detection/ground-truth pairs measured.
    public var count: Int
    /// Mean normalised error (0 when ``count`` is 0).
    public var mean: Double
    /// Median normalised error (the mean of the two middle values for an even count; 0 when empty).
    public var median: Double

    /// Creates a result.
    public init(count: Int, mean: Double, median: Double) {
        self.count = count
        self.mean = mean
        self.median = median
    }

    /// The normalised eye error of one pair, or `nil` when it cannot be measured (see the type's description).
    public static func normalizedError(detected: DetectedFace, truth: GroundTruthFace) -> Double? {
        guard let d1 = detected.leftEye, let d2 = detected.rightEye, let g1 = truth.leftEye, let g2 = truth.rightEye
        else { return nil }
        let (dl, dr) = d1.x <= d2.x ? (d1, d2) : (d2, d1)
        let (gl, gr) = g1.x <= g2.x ? (g1, g2) : (g2, g1)
        let interocular = distance(gl, gr)
        guard interocular > 0 else { return nil }
        return (distance(dl, gl) + distance(dr, gr)) / 2 / interocular
    }

    /// Summarises per-pair errors.
    public static func summarize(_ errors: [Double]) -> EyeLandmarkError {
        guard !errors.isEmpty else { return EyeLandmarkError(count: 0, mean: 0, median: 0) }
        let sorted = errors.sorted()
        let middle = sorted.count / 2
        let median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        return EyeLandmarkError(count: errors.count, mean: errors.reduce(0, +) / Double(errors.count), median: median)
    }

    private static func distance(_ a: FacePoint, _ b: FacePoint) -> Double {
        let dx = Double(a.x) - Double(b.x)
        let dy = Double(a.y) - Double(b.y)
        return (dx * dx + dy * dy).squareRoot()
    }
}
