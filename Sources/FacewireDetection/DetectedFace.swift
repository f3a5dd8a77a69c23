import Foundation

/// One face found in an image, in that image's pixel coordinates (origin top left, y down).
///
/// Landmarks are named by their position **in the image**, not by the subject's anatomy: ``leftEye`` is the
/// eye with the smaller x (for an upright frontal face, the subject's right eye). Every landmark is optional
/// because not every backend provides it (cascades give at most the eyes).
public struct DetectedFace: Sendable, Equatable {
    /// The face's bounding box, clipped to the image.
    public var bounds: FaceRect
    /// The eye on the image's left side (smaller x).
    public var leftEye: FacePoint?
    /// The eye on the image's right side (larger x).
    public var rightEye: FacePoint?
    /// The mouth centre: the midpoint of the two mouth corners.
    public var mouth: FacePoint?
    /// The tip of the nose.
    public var nose: FacePoint?
    /// Roll of the face in degrees, from the eye line:
    /// `atan2(rightEye.y - leftEye.y, rightEye.x - leftEye.x)` in degrees, in `-90...90`.
    ///
    /// 0 means the eyes are level. Because y points down, a **positive** angle means the face is turned
    /// **clockwise** on screen (the image-right eye is lower). `nil` when either eye is missing.
    public var faceAngle: Float?
    /// The detector's confidence. YuNet and CenterFace give a probability in `0...1`; the cascade maps its
    /// neighbour count `n` to `n / (n + 5)`.
    public var confidence: Float

    /// Creates a face. ``faceAngle`` is computed from the eyes when it is not given.
    public init(
        bounds: FaceRect, leftEye: FacePoint? = nil, rightEye: FacePoint? = nil, mouth: FacePoint? = nil,
        nose: FacePoint? = nil, faceAngle: Float? = nil, confidence: Float
    ) {
        self.bounds = bounds
        self.leftEye = leftEye
        self.rightEye = rightEye
        self.mouth = mouth
        self.nose = nose
        self.faceAngle = faceAngle ?? Self.rollAngle(leftEye: leftEye, rightEye: rightEye)
        self.confidence = confidence
    }

    /// The roll angle in degrees for two eyes (see ``faceAngle``), or `nil` if either is missing.
    public static func rollAngle(leftEye: FacePoint?, rightEye: FacePoint?) -> Float? {
        guard let left = leftEye, let right = rightEye else { return nil }
        let dx = Double(right.x - left.x)
        let dy = Double(right.y - left.y)
        guard dx != 0 || dy != 0 else { return nil }
        return Float(atan2(dy, dx) * 180 / Double.pi)
    }

    /// This face with every coordinate multiplied by `sx` horizontally and `sy` vertically (for example to map
    /// from a downscaled image back to full resolution). ``faceAngle`` is recomputed.
    public func scaled(x sx: Float, y sy: Float) -> DetectedFace {
        func point(_ p: FacePoint?) -> FacePoint? { p.map { FacePoint(x: $0.x * sx, y: $0.y * sy) } }
        return DetectedFace(
            bounds: FaceRect(x: bounds.x * sx, y: bounds.y * sy, width: bounds.width * sx, height: bounds.height * sy),
            leftEye: point(leftEye), rightEye: point(rightEye), mouth: point(mouth), nose: point(nose),
            confidence: confidence)
    }
}
