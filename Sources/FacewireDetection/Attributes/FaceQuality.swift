import Foundation

/// How usable a face is, 0...1: the product of a size, a sharpness and a pose factor (each 0...1), times the mesh's
/// confidence that a face is there. Pure arithmetic; what the live view and the pulse estimator use to prefer faces.
public enum FaceQuality {
    /// The face's size in pixels for ``score(faceSize:sharpness:yaw:pitch:presence:)``: the larger of the box's
    /// height and twice the eye distance (the box alone varies by detector).
    public static func faceSize(of face: DetectedFace) -> Float {
        var size = face.bounds.height
        if let left = face.leftEye, let right = face.rightEye {
            let dx = right.x - left.x
            let dy = right.y - left.y
            size = max(size, 2 * (dx * dx + dy * dy).squareRoot())
        }
        return size.isFinite ? max(0, size) : 0
    }

    /// Faces this small (px) score 0 for size.
    public static let minimumSize: Float = 24
    /// Faces this large (px) or larger score 1 for size.
    public static let fullSize: Float = 96
    /// The Laplacian variance (see ``FaceMeshOutput/sharpness``) at which sharpness scores 0.5.
    public static let halfSharpness: Float = 40
    /// The angle (degrees, yaw and pitch combined) at which the pose factor reaches 0.
    public static let maximumAngle: Float = 70

    /// The quality score. `sharpness`, `pitch` and `presence` may be unknown (`nil`): their factor is then left out.
    public static func score(faceSize: Float, sharpness: Float?, yaw: Float?, pitch: Float?, presence: Float?) -> Float {
        let size = smoothstep((faceSize - minimumSize) / (fullSize - minimumSize))
        var quality = size
        if let sharpness, sharpness.isFinite {
            let value = max(0, sharpness)
            quality *= value / (value + halfSharpness)
        }
        let yawValue = yaw.flatMap { $0.isFinite ? $0 : nil } ?? 0
        let pitchValue = pitch.flatMap { $0.isFinite ? $0 : nil } ?? 0
        let angle = (yawValue * yawValue + pitchValue * pitchValue).squareRoot()
        quality *= max(0, cos(min(angle, maximumAngle) / maximumAngle * .pi / 2))
        if let presence, presence.isFinite { quality *= min(1, max(0, presence)) }
        return min(1, max(0, quality))
    }

    static func smoothstep(_ x: Float) -> Float {
        guard x.isFinite else { return x > 0 ? 1 : 0 }
        let t = min(1, max(0, x))
        return t * t * (3 - 2 * t)
    }
}
