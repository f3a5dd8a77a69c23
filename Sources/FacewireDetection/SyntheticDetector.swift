import FacewireVocabulary
import Foundation
import FacewireImage

/// A detector that needs no pixels: given a frame's upright size, it answers with faces without looking at any.
/// ``FrameAnalyzer`` then reads only the JPEG's header (no decode, no attributes).
public protocol HeaderOnlyDetector: FaceDetector {
    /// The faces of a frame `width` × `height` pixels (upright), in its coordinates.
    func detect(uprightWidth width: Int, uprightHeight height: Int) throws -> [DetectedFace]
}

/// **A test tool, not a detector**: for measuring the cluster's own machinery (`--detector synthetic
/// --synthetic-ms N`). It costs what a detector taking `milliseconds` would cost in time but not in CPU: the worker
/// reads the JPEG header, sleeps `milliseconds`, and reports one fixed face (centred, a third of the shorter side,
/// with 5 level landmarks). Sixteen such workers fit on two cores. `--detector noop` is the same with no wait and
/// no face: what the transport alone can carry.
public final class SyntheticDetector: HeaderOnlyDetector {
    /// The longest wait accepted, in milliseconds.
    public static let maxMilliseconds = 60_000

    /// How long each frame takes.
    public let milliseconds: Int
    /// Whether the fixed face is reported (false: no face, `--detector noop`).
    public let reportsFace: Bool

    /// - Throws: ``DetectionError`` `.invalidConfiguration` for a wait outside 0...``maxMilliseconds``.
    public init(milliseconds: Int, reportsFace: Bool = true) throws {
        guard (0...Self.maxMilliseconds).contains(milliseconds) else {
            throw DetectionError(.invalidConfiguration, "--synthetic-ms \(milliseconds) is outside 0...\(Self.maxMilliseconds)")
        }
        self.milliseconds = milliseconds
        self.reportsFace = reportsFace
    }

    public func detect(uprightWidth width: Int, uprightHeight height: Int) throws -> [DetectedFace] {
        if milliseconds > 0 { Thread.sleep(forTimeInterval: Double(milliseconds) / 1000) }
        guard reportsFace else { return [] }
        return Self.face(width: width, height: height).map { [$0] } ?? []
    }

    /// The pixel path (for callers that decoded anyway): the same face for the image's size.
    public func detect(_ image: PixelImage, inputWidth: Int?) throws -> [DetectedFace] {
        try detect(uprightWidth: image.width, uprightHeight: image.height)
    }

    /// The fixed face of a `width` × `height` frame: centred, side a third of the shorter side; `nil` for a frame
    /// under 3 px.
    static func face(width: Int, height: Int) -> DetectedFace? {
        let side = Float(min(width, height)) / 3
        guard side >= 1 else { return nil }
        let x = Float(width) / 2 - side / 2, y = Float(height) / 2 - side / 2
        func point(_ fx: Float, _ fy: Float) -> FacePoint { FacePoint(x: x + fx * side, y: y + fy * side) }
        var face = DetectedFace(
            bounds: FaceRect(x: x, y: y, width: side, height: side), leftEye: point(0.3, 0.4), rightEye: point(0.7, 0.4),
            mouth: point(0.5, 0.75), nose: point(0.5, 0.58), confidence: 1)
        face.mouthCorners = (point(0.35, 0.75), point(0.65, 0.75))
        return face
    }
}
