import FacewireVocabulary
import FacewireOpenCV
import FacewireImage

/// The smile and eyes-closed classifiers of `Sources/COpenCV/attributes.cpp`: Haar cascades and measured
/// geometry inside a 128 × 128 face crop aligned on the landmarks. Operating points and measured precision and
/// recall: `evaluation/expressions/RESULTS.md`.
public final class CascadeExpressionClassifier: ExpressionClassifier {
    private let attributes: OpenCVFaceAttributes

    /// Loads the cascades from `cascadeDirectory` (`nil`: Debian's `/usr/share/opencv4/haarcascades`).
    /// - Throws: ``DetectionError`` `.modelNotFound` when the cascades cannot be loaded.
    public init(cascadeDirectory: String? = nil) throws {
        do {
            attributes = try OpenCVFaceAttributes(cascadeDirectory: cascadeDirectory)
        } catch {
            throw DetectionError(.modelNotFound, "cannot load the expression cascades (install opencv-data): \(error.message)")
        }
    }

    public func classify(_ image: PixelImage, face: DetectedFace, which: AnalysisOptions.Classifiers) throws -> FaceExpression {
        guard let left = face.leftEye, let right = face.rightEye, let nose = face.nose, let corners = face.mouthCorners else {
            return FaceExpression()
        }
        let landmarks: [Float] = [left.x, left.y, right.x, right.y, nose.x, nose.y, corners.left.x, corners.left.y, corners.right.x, corners.right.y]
        let result: OpenCVFaceAttributes.Result
        do {
            result = try attributes.classify(image, landmarks: landmarks, which: Int(which.rawValue))
        } catch {
            throw DetectionError(.detectionFailed, error.message(or: "expression classifiers failed"))
        }
        var expression = FaceExpression()
        if let score = result.smileScore {
            expression.smileScore = score
            expression.hasSmile = result.hasSmile
        }
        if let left = result.leftEyeClosedScore, let right = result.rightEyeClosedScore {
            expression.leftEyeClosedScore = left
            expression.leftEyeClosed = result.leftEyeClosed
            expression.rightEyeClosedScore = right
            expression.rightEyeClosed = result.rightEyeClosed
        }
        return expression
    }
}

/// The 5-landmark expression classifier (the mesh's fallback).
/// - Throws: ``DetectionError`` when the cascades are missing.
public func makeExpressionClassifier() throws -> (any ExpressionClassifier)? {
    try CascadeExpressionClassifier()
}

/// What workers measure faces with, for `configuration`; `note` receives a line to log when the method differs
/// from the one asked for.
/// - Throws: ``DetectionError`` when a model or the cascades are missing.
public func makeAttributeMeasurer(
    _ configuration: AttributeConfiguration = AttributeConfiguration(), note: (String) -> Void = { _ in }
) throws -> any FaceAttributeMeasurer {
    let resolved = try configuration.resolve()
    if let text = resolved.note { note(text) }
    let fallback = LandmarkAttributeMeasurer(classifier: try CascadeExpressionClassifier())
    guard let mesh = resolved.meshModel, let iris = resolved.irisModel else { return fallback }
    return try MeshAttributeMeasurer(
        meshModel: mesh, irisModel: iris, emotionModel: resolved.emotionModel, runtime: resolved.runtime, fallback: fallback)
}
