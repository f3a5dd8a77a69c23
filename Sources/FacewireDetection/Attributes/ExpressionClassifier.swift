import FacewireVocabulary
import FacewireImage

/// Something that reads a face's expression (smile, eyes closed) from its pixels.
///
/// **Threading:** implementations own native OpenCV state: one per thread, like ``FaceDetector``.
public protocol ExpressionClassifier: AnyObject {
    /// Classifies `face`, found in `image` (same coordinates), running only the classifiers in `which`.
    /// Classifiers that cannot run on this face (missing landmarks) leave their score `nil`.
    /// - Throws: ``DetectionError`` when OpenCV fails.
    func classify(_ image: PixelImage, face: DetectedFace, which: AnalysisOptions.Classifiers) throws -> FaceExpression
}
