import FacewireVocabulary
import FacewireOpenCV
import FacewireImage

/// The Haar/LBP cascade fallback (OpenCV's `CascadeClassifier`), for machines without a DNN model.
///
/// Boxes are square; there are no landmarks except, when an eye cascade is given, the two eyes (searched in
/// the upper half of each face box with confidence at least 0.5). Confidence is the neighbour count `n` mapped
/// to `n / (n + 5)`, so the default threshold 0.5 equals OpenCV's usual `minNeighbors = 5`. One instance per
/// thread.
public final class CascadeDetector: FaceDetector {
    /// Default input width: AP on the DEV set is 0.65 at 640 but only 0.41 at 320 (BENCHMARKS.md); the cost grows
    /// with the pixel count.
    public static let defaultInputWidth = 640
    /// Default score threshold (5 neighbours).
    public static let defaultScoreThreshold: Float = 0.5
    /// Directories searched for OpenCV's cascade files, in order.
    public static let cascadeDirectories = [
        "/usr/share/opencv4/haarcascades", "/usr/local/share/opencv4/haarcascades", "/usr/share/opencv/haarcascades",
    ]

    /// The first existing `haarcascade_frontalface_default.xml` in ``cascadeDirectories``.
    public static var defaultFaceCascadePath: String? { findCascade("haarcascade_frontalface_default.xml") }
    /// The first existing `haarcascade_eye.xml` in ``cascadeDirectories``.
    public static var defaultEyeCascadePath: String? { findCascade("haarcascade_eye.xml") }

    private let native: NativeDetector

    /// The width images are scaled to before detection (`nil`: each image's own size).
    public var inputWidth: Int? { native.inputWidth }

    /// Loads the cascades.
    /// - Parameters:
    ///   - faceCascadePath: a face cascade XML file; `nil` uses ``defaultFaceCascadePath``.
    ///   - eyeCascadePath: an eye cascade used to fill ``DetectedFace/leftEye`` and ``DetectedFace/rightEye``;
    ///     `nil` disables the eye search.
    ///   - scoreThreshold: minimum confidence in `0...1` (see the type's description).
    ///   - inputWidth: width to scale images to before detection; `nil` runs at each image's size.
    ///   - maxFaces: most faces returned per image (best first).
    /// - Throws: ``DetectionError`` `.modelNotFound`, `.modelLoadFailed` or `.invalidConfiguration`.
    public init(
        faceCascadePath: String? = nil, eyeCascadePath: String? = CascadeDetector.defaultEyeCascadePath,
        scoreThreshold: Float = CascadeDetector.defaultScoreThreshold,
        inputWidth: Int? = CascadeDetector.defaultInputWidth, maxFaces: Int = AnalysisOptions.maxFacesLimit
    ) throws {
        guard let facePath = faceCascadePath ?? Self.defaultFaceCascadePath else {
            throw DetectionError(
                .modelNotFound,
                "haarcascade_frontalface_default.xml not found in \(Self.cascadeDirectories.joined(separator: ", ")) (install opencv-data)")
        }
        if let eyeCascadePath, !FileSystem.isReadableFile(eyeCascadePath) {
            throw DetectionError(.modelNotFound, "eye cascade file not found or not readable: \(eyeCascadePath)")
        }
        native = try NativeDetector.create(
            what: "face cascade", path: facePath, inputWidth: inputWidth, scoreThreshold: scoreThreshold,
            maxFaces: maxFaces,
            .cascade(facePath: facePath, eyeCascadePath: eyeCascadePath))
    }

    /// Finds faces, best first, in `image`'s coordinates.
    public func detect(_ image: PixelImage, inputWidth: Int?) throws -> [DetectedFace] {
        try native.detect(image, inputWidth: inputWidth)
    }

    private static func findCascade(_ name: String) -> String? {
        cascadeDirectories.map { "\($0)/\(name)" }.first { FileSystem.isReadableFile($0) }
    }
}
