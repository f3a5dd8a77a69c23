import FacewireVocabulary
import FacewireImage

/// Measures the per-face attributes a frame's options ask for (smile, eyes, head pose, quality, the landmark list),
/// in place, on the pixels the faces were found in.
///
/// **Threading:** implementations own native OpenCV state: one per thread, like ``FaceDetector``.
public protocol FaceAttributeMeasurer: AnyObject {
    /// Measures `faces` (in `image`'s coordinates) for `options`. Attributes that were not asked for, or that cannot
    /// be measured on a face, stay `nil`.
    /// - Throws: ``DetectionError`` when OpenCV fails.
    func measure(_ image: PixelImage, faces: inout [DetectedFace], options: AnalysisOptions) throws

    /// The width a frame `uprightWidth` pixels wide is decoded at (at least; the detector may need more) when this
    /// measurer runs with `options`.
    func decodeWidth(for options: AnalysisOptions, uprightWidth: Int) -> Int
}

extension FaceAttributeMeasurer {
    /// At least ``FrameAnalyzer/classifierWidth`` (640 px) or the full width when narrower, so that eyes and mouths
    /// keep enough pixels for the 5-landmark classifiers.
    public func decodeWidth(for options: AnalysisOptions, uprightWidth: Int) -> Int {
        min(uprightWidth, FrameAnalyzer.classifierWidth)
    }
}

/// The attributes measured on the detector's 5 landmarks alone: the Haar-cascade smile and eyes-closed classifiers
/// of `Sources/COpenCV/attributes.cpp` (``CascadeExpressionClassifier``) and the landmark yaw. The fallback for
/// faces too small for the face mesh, and the whole story when the mesh models are not installed.
public final class LandmarkAttributeMeasurer: FaceAttributeMeasurer {
    let classifier: any ExpressionClassifier

    /// Measures with `classifier` (owned from now on).
    public init(classifier: any ExpressionClassifier) {
        self.classifier = classifier
    }

    public func measure(_ image: PixelImage, faces: inout [DetectedFace], options: AnalysisOptions) throws {
        for index in faces.indices { try measure(image, face: &faces[index], options: options) }
    }

    /// Measures one face: the cascade classifiers asked for, and the quality from the face's size and landmark yaw.
    func measure(_ image: PixelImage, face: inout DetectedFace, options: AnalysisOptions) throws {
        let which = options.classifiers.intersection([.smile, .eyes])
        if !which.isEmpty {
            face.expression = try classifier.classify(image, face: face, which: which)
        }
        if options.classifiers.contains(.quality) {
            face.quality = FaceQuality.score(faceHeight: face.bounds.height, sharpness: nil, yaw: face.yaw, pitch: nil, presence: nil)
        }
        if !options.classifiers.isEmpty { face.attributeSource = .landmarks }
    }
}
