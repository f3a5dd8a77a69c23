import COpenCV
import FacewireImage

/// The smile and eyes-closed classifiers of `Sources/COpenCV/attributes.cpp`: Haar cascades and measured
/// geometry inside a 128 × 128 face crop aligned on the landmarks. Operating points and measured precision and
/// recall: `scripts/expressions/RESULTS.md`.
public final class CascadeExpressionClassifier: ExpressionClassifier {
    private let handle: OpaquePointer

    /// Loads the cascades from `cascadeDirectory` (`nil`: Debian's `/usr/share/opencv4/haarcascades`).
    /// - Throws: ``DetectionError`` `.modelNotFound` when the cascades cannot be loaded.
    public init(cascadeDirectory: String? = nil) throws {
        var errorText = [CChar](repeating: 0, count: 1024)
        let created = errorText.withUnsafeMutableBufferPointer { fwcv_attributes_create(cascadeDirectory, $0.baseAddress, $0.count) }
        guard let created else {
            let message = cErrorMessage(errorText)
            throw DetectionError(.modelNotFound, "cannot load the expression cascades (install opencv-data): \(message)")
        }
        handle = created
    }

    deinit { fwcv_attributes_destroy(handle) }

    public func classify(_ image: PixelImage, face: DetectedFace, which: AnalysisOptions.Classifiers) throws -> FaceExpression {
        guard let left = face.leftEye, let right = face.rightEye, let nose = face.nose, let corners = face.mouthCorners else {
            return FaceExpression()
        }
        let landmarks: [Float] = [left.x, left.y, right.x, right.y, nose.x, nose.y, corners.left.x, corners.left.y, corners.right.x, corners.right.y]
        var result = fwcv_face_attributes_result()
        var errorText = [CChar](repeating: 0, count: 1024)
        let status = image.bytes.withUnsafeBufferPointer { pixels in
            landmarks.withUnsafeBufferPointer { points in
                errorText.withUnsafeMutableBufferPointer { err in
                    fwcv_face_attributes(
                        handle, pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.stride),
                        Int32(image.format.channels), points.baseAddress, Int32(which.rawValue), &result, err.baseAddress, err.count)
                }
            }
        }
        guard status == 0 else {
            let message = cErrorMessage(errorText)
            throw DetectionError(.detectionFailed, message.isEmpty ? "expression classifiers failed" : message)
        }
        var expression = FaceExpression()
        if result.smile_valid != 0 {
            expression.smileScore = result.smile_score
            expression.hasSmile = result.has_smile != 0
        }
        if result.eyes_valid != 0 {
            expression.leftEyeClosedScore = result.left_eye_closed_score
            expression.leftEyeClosed = result.left_eye_closed != 0
            expression.rightEyeClosedScore = result.right_eye_closed_score
            expression.rightEyeClosed = result.right_eye_closed != 0
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
    return try MeshAttributeMeasurer(meshModel: mesh, irisModel: iris, emotionModel: resolved.emotionModel, fallback: fallback)
}
