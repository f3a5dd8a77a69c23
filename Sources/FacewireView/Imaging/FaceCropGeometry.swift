import Foundation

/// Where a face crop's pixels come from: its size, and the affine map from crop pixels to pixels of the upright frame.
/// Pure arithmetic, no pixels.
///
/// The crop is the face's box, clipped to the frame, grown by `margin` × its size on each side, turned by the face's
/// roll about the box's centre so that the eyes are level, and shrunk (never enlarged) so that its longer side is at
/// most `maxSide`. Crop point q (continuous, origin at the crop's top-left corner) shows frame point
///
///     p = c + R(roll) · diag(kx, ky) · (q − size / 2),   R(a) = [cos a, −sin a; sin a, cos a],
///
/// c the box's centre and kx, ky frame pixels per crop pixel: the crop's x axis runs along the face's eye line
/// (y down, positive roll clockwise on screen, SPEC §11.3).
public struct FaceCropGeometry: Sendable, Equatable {
    /// The crop's size in pixels (each at least 1).
    public var width: Int
    public var height: Int
    /// Crop pixel (x, y) shows frame pixel (m[0] x + m[1] y + m[2], m[3] x + m[4] y + m[5]): pixel indices, centres at
    /// integers, in the upright frame the geometry was made for.
    public var matrix: [Double]
    /// Frame pixels per crop pixel along the longer side (above 1 when the crop shrinks the face).
    public var shrink: Double { max(hypot(matrix[0], matrix[3]), hypot(matrix[1], matrix[4])) }

    /// Largest accepted `maxSide`; larger values are clamped to it.
    public static let maxSideLimit = 4096
    /// Largest accepted margin (fraction of the box on each side); larger values are clamped to it.
    public static let maxMargin: Float = 2

    /// The crop of `face` in an upright frame of `frameWidth` × `frameHeight` pixels.
    ///
    /// Hostile values: a box with a NaN or infinite value, or a width or height that is not positive, throws
    /// ``ImagingError/Code/invalidFace``; a box that does not overlap the frame throws
    /// ``ImagingError/Code/faceOutsideImage``; a box partly outside is clipped to the frame first (so a huge box
    /// crops the whole frame). A `nil` or non-finite roll means level; any finite roll is taken modulo 360°.
    /// `margin` is clamped to `0...2` (non-finite: 0) and `maxSide` to `1...4096`.
    public init(face: FaceDrawing, frameWidth: Int, frameHeight: Int, margin: Float, maxSide: Int) throws {
        let box = face.bounds
        let values = [box.x, box.y, box.width, box.height].map { Double($0) }
        guard values.allSatisfy(\.isFinite), values[2] > 0, values[3] > 0 else {
            throw ImagingError(.invalidFace, "face box \(box) is not a finite box of positive size")
        }
        let left = max(values[0], 0)
        let top = max(values[1], 0)
        let right = min(values[0] + values[2], Double(frameWidth))
        let bottom = min(values[1] + values[3], Double(frameHeight))
        guard right > left, bottom > top else {
            throw ImagingError(.faceOutsideImage, "face box \(box) lies outside the \(frameWidth)×\(frameHeight) frame")
        }
        let grow = 1 + 2 * Double(margin.isFinite ? min(max(margin, 0), Self.maxMargin) : 0)
        let cropWidth = (right - left) * grow
        let cropHeight = (bottom - top) * grow
        let side = Double(min(max(maxSide, 1), Self.maxSideLimit))
        let scale = min(1, side / max(cropWidth, cropHeight))
        width = max(1, Int((cropWidth * scale).rounded()))
        height = max(1, Int((cropHeight * scale).rounded()))

        let degrees = face.roll.flatMap { $0.isFinite ? Double($0).truncatingRemainder(dividingBy: 360) : nil } ?? 0
        let angle = degrees * Double.pi / 180
        let (kx, ky) = (cropWidth / Double(width), cropHeight / Double(height))
        let linear = [cos(angle) * kx, -sin(angle) * ky, sin(angle) * kx, cos(angle) * ky]
        // Pixel indices: crop pixel j is at q = j + 0.5; frame point p is frame pixel p − 0.5.
        let (qx, qy) = (0.5 - Double(width) / 2, 0.5 - Double(height) / 2)
        let (cx, cy) = ((left + right) / 2, (top + bottom) / 2)
        matrix = [
            linear[0], linear[1], cx - 0.5 + linear[0] * qx + linear[1] * qy,
            linear[2], linear[3], cy - 0.5 + linear[2] * qx + linear[3] * qy,
        ]
    }

    /// The same crop taken from the frame decoded at another size (`scaleX`, `scaleY`: that image's pixels per
    /// upright-frame pixel, for example 1/4 for a JPEG decoded at ¼).
    public func scaled(x scaleX: Double, y scaleY: Double) -> FaceCropGeometry {
        var result = self
        // p' + 0.5 = s (p + 0.5) for pixel indices p.
        let rows = [scaleX, scaleY]
        for row in 0..<2 {
            let s = rows[row]
            result.matrix[3 * row] = s * matrix[3 * row]
            result.matrix[3 * row + 1] = s * matrix[3 * row + 1]
            result.matrix[3 * row + 2] = s * (matrix[3 * row + 2] + 0.5) - 0.5
        }
        return result
    }

    /// The frame point crop pixel (x, y) shows (pixel indices).
    public func framePixel(cropX x: Double, cropY y: Double) -> (x: Double, y: Double) {
        (matrix[0] * x + matrix[1] * y + matrix[2], matrix[3] * x + matrix[4] * y + matrix[5])
    }
}
