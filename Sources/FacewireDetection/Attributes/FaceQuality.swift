import Foundation

/// How usable a face is, 0...1, for recognition, tracking thumbnails and the pulse estimate: the product of four
/// ramps, each clamped to 0...1 (design constants, not fitted; `evaluation/expressions/RESULTS-mesh.md`):
///
/// | factor | 0 at | 1 at |
/// |---|---|---|
/// | size: the detector box's height | 40 px | 80 px |
/// | sharpness: the Laplacian variance of the mesh crop (``FaceMeshOutput/sharpness``), on a log scale | 15 | 60 |
/// | pose: (1 − ramp(\|yaw\|, 20°, 45°)) × (1 − ramp(\|pitch\|, 15°, 35°)) | 45° yaw or 35° pitch | within 20° and 15° |
/// | presence: the mesh's face probability | 0.5 | 0.9 |
///
/// A factor whose input is unknown (`nil`: no mesh ran) is left out.
public enum FaceQuality {
    static let size: (Float, Float) = (40, 80)
    static let sharpness: (Float, Float) = (15, 60)
    static let yaw: (Float, Float) = (20, 45)
    static let pitch: (Float, Float) = (15, 35)
    static let presence: (Float, Float) = (0.5, 0.9)

    /// The quality score (see the table).
    public static func score(faceHeight: Float, sharpness: Float?, yaw: Float?, pitch: Float?, presence: Float?) -> Float {
        var quality = ramp(faceHeight, size)
        if let sharpness {
            quality *= ramp(log(max(sharpness, 1e-9)), (log(Self.sharpness.0), log(Self.sharpness.1)))
        }
        if let yaw { quality *= 1 - ramp(abs(yaw), Self.yaw) }
        if let pitch { quality *= 1 - ramp(abs(pitch), Self.pitch) }
        if let presence { quality *= ramp(presence, Self.presence) }
        return quality.isFinite ? min(1, max(0, quality)) : 0
    }

    /// (value − low) / (high − low), clamped to 0...1; 0 for a value that is not a number.
    static func ramp(_ value: Float, _ range: (Float, Float)) -> Float {
        guard value.isFinite else { return value == .infinity ? 1 : 0 }
        return min(1, max(0, (value - range.0) / (range.1 - range.0)))
    }
}
